package policy

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
)

// ConfirmToken: the agent confirms a mutating call by repeating it with the
// one-time token its CONFIRMATION_REQUIRED error carried. A blind `confirm:
// true` is not enough: the token proves the agent saw that exact call refused.
const ConfirmToken ConfirmMode = "token"

// Tokens issues and redeems one-time confirmation tokens, each bound to one
// call (the caller's key: identity + session + tool + canonical argument hash).
//
// A token verifies itself: "ct_" + base64url(version, expiry, random id,
// HMAC-SHA256 over those and the call key), so any replica holding the same
// key can check one it did not issue, and nothing needs storing at issue
// time. Single use is enforced by marking the id used in Store (Redis SET NX
// when shared, memory otherwise) until the token would expire anyway.
type Tokens struct {
	TTL time.Duration
	Now func() time.Time
	// Store records used token ids (nil = this process's memory).
	Store state.Store

	key []byte
}

const (
	tokenVersion = 1
	tokenIDLen   = 12
	tokenMACLen  = 16
	tokenLen     = 1 + 8 + tokenIDLen + tokenMACLen
	tokenPrefix  = "ct_"
)

// NewTokens returns a book with a random per-process key whose tokens live
// five minutes: right for one replica, or replicas that share no key.
func NewTokens() *Tokens {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand never fails on supported platforms
	return NewTokensWithKey(k, nil)
}

// NewTokensWithKey returns a book whose tokens any holder of key can verify
// (derive key from the cluster key; see internal/cluster). store records used
// ids; nil keeps them in memory.
func NewTokensWithKey(key []byte, store state.Store) *Tokens {
	if store == nil {
		store = state.NewMemory()
	}
	return &Tokens{TTL: 5 * time.Minute, Now: time.Now, Store: store, key: bytes.Clone(key)}
}

func (t *Tokens) mac(payload []byte, callKey string) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write(payload)
	m.Write([]byte(callKey))
	return m.Sum(nil)[:tokenMACLen]
}

// Issue returns a fresh token for callKey.
func (t *Tokens) Issue(callKey string) string {
	b := make([]byte, 1+8+tokenIDLen, tokenLen)
	b[0] = tokenVersion
	binary.BigEndian.PutUint64(b[1:9], uint64(t.Now().Add(t.TTL).UnixMilli()))
	_, _ = rand.Read(b[9:])
	b = append(b, t.mac(b, callKey)...)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// Redeem consumes tok if it was issued (by any holder of the key) for
// callKey, has not expired and was not redeemed before.
func (t *Tokens) Redeem(tok, callKey string) bool {
	raw, ok := strings.CutPrefix(tok, tokenPrefix)
	if !ok || len(raw) > 2*tokenLen {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) != tokenLen || b[0] != tokenVersion {
		return false
	}
	payload, sum := b[:tokenLen-tokenMACLen], b[tokenLen-tokenMACLen:]
	if !hmac.Equal(sum, t.mac(payload, callKey)) {
		return false
	}
	exp := time.UnixMilli(int64(binary.BigEndian.Uint64(b[1:9])))
	now := t.Now()
	left := exp.Sub(now)
	if left <= 0 || left > t.TTL+time.Minute {
		return false // expired, or minted with a longer TTL than this book allows
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*state.OpTimeout)
	defer cancel()
	first, err := t.Store.Once(ctx, "ct:"+hex.EncodeToString(b[9:9+tokenIDLen]), left+time.Second)
	return err == nil && first
}
