package policy

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// ConfirmToken: the agent confirms a mutating call by repeating it with the
// one-time token its CONFIRMATION_REQUIRED error carried. A blind `confirm:
// true` is not enough: the token proves the agent saw that exact call refused.
const ConfirmToken ConfirmMode = "token"

// Tokens issues and redeems one-time confirmation tokens, each bound to one
// call (the caller's key: session + tool + argument hash).
type Tokens struct {
	TTL     time.Duration
	MaxKeys int
	Now     func() time.Time

	mu sync.Mutex
	m  map[string]issued
}

type issued struct {
	key string
	at  time.Time
}

// NewTokens returns a book whose tokens live five minutes.
func NewTokens() *Tokens { return &Tokens{TTL: 5 * time.Minute, MaxKeys: 10000, Now: time.Now} }

// Issue returns a fresh token for key.
func (t *Tokens) Issue(key string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	tok := "ct_" + base64.RawURLEncoding.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]issued{}
	}
	if len(t.m) >= t.MaxKeys {
		t.expireLocked()
	}
	if len(t.m) < t.MaxKeys {
		t.m[tok] = issued{key: key, at: t.Now()}
	}
	return tok
}

// Redeem consumes tok if it was issued for key and has not expired.
func (t *Tokens) Redeem(tok, key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	is, ok := t.m[tok]
	if !ok || is.key != key {
		return false
	}
	delete(t.m, tok)
	return t.Now().Sub(is.at) < t.TTL
}

func (t *Tokens) expireLocked() {
	now := t.Now()
	for k, is := range t.m {
		if now.Sub(is.at) >= t.TTL {
			delete(t.m, k)
		}
	}
}
