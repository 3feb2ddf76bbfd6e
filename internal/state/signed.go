package state

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"log/slog"
	"sync"
	"time"
)

// Signed is a Store whose values carry a MAC: what it stores with Put and
// Claim is sealed under its key and the key name, and what Get and Scan
// read back is verified. A value that does not verify — written by anyone
// but a process holding the key (plain redis-cli, another deployment's
// cluster key, an older version that did not sign), moved from another
// key, or altered — is refused: Get answers ErrNotFound and Scan leaves it
// out, as if it were absent, and it is logged once as a warning naming the
// key (never the value).
//
// It is for the values that grant something (approval answers, remembered
// decisions, pins, provider toggles): with server.redis anyone who can
// write to Redis could otherwise approve, remember, pin or toggle. The
// key is derived from the cluster key (cluster.SignedPurpose), so every
// replica verifies what any other wrote. Counters, markers and buckets
// (Incr, Count, Once, Take) and Delete pass through unsigned: a counter
// is no grant, and nothing stops a Redis writer from deleting.
//
// A MAC binds a value to its key, not to a moment: a Redis writer can put
// back a value a replica wrote earlier under the same key (see
// docs/scale-out.md, "What Redis access gives").
type Signed struct {
	inner Store
	key   []byte
	log   *slog.Logger

	mu      sync.Mutex
	refused map[string][sha256.Size]byte // key → the value last refused, so each is logged once
}

// signedMagic starts every sealed value: "ats1." + MAC (base64url, 43
// characters) + "." + the value.
const signedMagic = "ats1."

const (
	macLen    = 43 // base64.RawURLEncoding of 32 bytes
	headerLen = len(signedMagic) + macLen + 1
	// maxRefused bounds the refusals remembered for deduplicated logging.
	maxRefused = 1024
)

var (
	_ Store = (*Signed)(nil)
	_ Bus   = (*Signed)(nil)
)

// NewSigned returns inner with its values sealed under key (32 bytes or
// more; cluster.Key.Derive(cluster.SignedPurpose)). A nil key makes a
// random one: what this process writes verifies in this process only (an
// in-memory store, one process). Refusals are logged to log (nil: none).
func NewSigned(inner Store, key []byte, log *slog.Logger) *Signed {
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	if len(key) < 32 {
		panic("state: NewSigned needs a key of at least 32 bytes")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Signed{inner: inner, key: key, log: log}
}

// Inner is the store the sealed values are kept in.
func (s *Signed) Inner() Store { return s.inner }

func (s *Signed) mac(key string, value []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(key)))
	m.Write([]byte("agent-tools signed value v1\x00"))
	m.Write(n[:])
	m.Write([]byte(key))
	m.Write(value)
	return m.Sum(nil)
}

// Seal returns value as stored under key.
func (s *Signed) Seal(key string, value []byte) []byte {
	out := make([]byte, 0, headerLen+len(value))
	out = append(out, signedMagic...)
	out = base64.RawURLEncoding.AppendEncode(out, s.mac(key, value))
	out = append(out, '.')
	return append(out, value...)
}

// Open returns the value sealed under key in sealed, and whether it
// verified. It logs nothing (see Get).
func (s *Signed) Open(key string, sealed []byte) ([]byte, bool) {
	if len(sealed) < headerLen || string(sealed[:len(signedMagic)]) != signedMagic || sealed[headerLen-1] != '.' {
		return nil, false
	}
	value := sealed[headerLen:]
	// The MAC's text is compared, not its decoding: base64 leaves two bits
	// of the last character unused, and one sealed value has one spelling.
	want := base64.RawURLEncoding.AppendEncode(nil, s.mac(key, value))
	if !hmac.Equal(sealed[len(signedMagic):headerLen-1], want) {
		return nil, false
	}
	return value, true
}

// verify opens a value read under key, logging a refusal once per value.
func (s *Signed) verify(key string, sealed []byte) ([]byte, bool) {
	v, ok := s.Open(key, sealed)
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok {
		delete(s.refused, key)
		return v, true
	}
	sum := sha256.Sum256(sealed)
	if prev, seen := s.refused[key]; seen && prev == sum {
		return nil, false
	}
	if s.refused == nil || len(s.refused) >= maxRefused {
		s.refused = map[string][sha256.Size]byte{}
	}
	s.refused[key] = sum
	s.log.Warn("shared state: refused a value that does not verify with the cluster key (not written by a replica of this cluster); treated as absent",
		"key", key)
	return nil, false
}

// Put implements Store, sealing value.
func (s *Signed) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return s.inner.Put(ctx, key, s.Seal(key, value), ttl)
}

// Claim implements Store, sealing value. A key held by a value that does
// not verify is claimed by nobody: the refusal is not undone by a write.
func (s *Signed) Claim(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	return s.inner.Claim(ctx, key, s.Seal(key, value), ttl)
}

// Get implements Store: a value that does not verify is ErrNotFound.
func (s *Signed) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.inner.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	v, ok := s.verify(key, b)
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

// Scan implements Store: values that do not verify are left out.
func (s *Signed) Scan(ctx context.Context, prefix string) (map[string][]byte, error) {
	m, err := s.inner.Scan(ctx, prefix)
	if err != nil {
		return nil, err
	}
	for k, b := range m {
		if v, ok := s.verify(k, b); ok {
			m[k] = v
		} else {
			delete(m, k)
		}
	}
	return m, nil
}

// Incr implements Store (unsigned: a counter).
func (s *Signed) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	return s.inner.Incr(ctx, key, ttl)
}

// Count implements Store (unsigned: a counter).
func (s *Signed) Count(ctx context.Context, key string) (int64, error) {
	return s.inner.Count(ctx, key)
}

// Delete implements Store.
func (s *Signed) Delete(ctx context.Context, keys ...string) error {
	return s.inner.Delete(ctx, keys...)
}

// Once implements Store (unsigned: a marker).
func (s *Signed) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return s.inner.Once(ctx, key, ttl)
}

// Take implements Store (unsigned: a bucket).
func (s *Signed) Take(ctx context.Context, key string, rate float64, burst int) (bool, time.Duration, error) {
	return s.inner.Take(ctx, key, rate, burst)
}

// Publish implements Bus when the inner store is one (else a no-op: the
// listeners' polls read the store). Messages are wake-ups, never grants.
func (s *Signed) Publish(ctx context.Context, topic, msg string) error {
	if b, ok := s.inner.(Bus); ok {
		return b.Publish(ctx, topic, msg)
	}
	return nil
}

// Listen implements Bus when the inner store is one (else nothing is heard).
func (s *Signed) Listen(ctx context.Context, topic string, f func(msg string)) {
	if b, ok := s.inner.(Bus); ok {
		b.Listen(ctx, topic, f)
	}
}

// Status implements Reporter when the inner store does.
func (s *Signed) Status() Status {
	if r, ok := s.inner.(Reporter); ok {
		return r.Status()
	}
	return Status{Backend: "memory"}
}
