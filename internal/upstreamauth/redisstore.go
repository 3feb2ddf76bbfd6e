package upstreamauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
)

// KV is the part of the shared state store (state.Redis) a RedisStore uses.
type KV interface {
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Get(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, keys ...string) error
	Scan(ctx context.Context, prefix string) (map[string][]byte, error)
}

// WatchStore is a Store that tells of logins stored elsewhere (another
// process, another replica): FileStore and RedisStore.
type WatchStore interface {
	Store
	Watch(ctx context.Context, changed func(provider string)) error
}

var (
	_ WatchStore = (*FileStore)(nil)
	_ WatchStore = (*RedisStore)(nil)
)

// redisPrefix namespaces the logins in the shared store (under its own
// "agent-tools:" prefix).
const redisPrefix = "upstream-token:"

// DefaultPollEvery is how often RedisStore.Watch reads the logins: one
// bounded SCAN per interval, so a login on one replica reaches the others
// within it.
const DefaultPollEvery = 2 * time.Second

// redisOpTimeout bounds one store operation (the Store interface has no
// context: it is called from token sources).
const redisOpTimeout = 5 * time.Second

// RedisStore keeps logins in Redis (server.redis), so every replica uses one
// login. Each entry is sealed with AES-256-GCM under a key derived from the
// cluster key (cluster.Key.Derive("upstream-tokens")), with the provider id
// as additional data: Redis (and its backups) never hold a readable token,
// and a replica with another cluster key cannot read them.
type RedisStore struct {
	kv   KV
	aead cipher.AEAD
	// PollEvery is Watch's interval (0 = DefaultPollEvery).
	PollEvery time.Duration
}

// NewRedisStore returns the store over kv with key, a 32-byte derived key.
func NewRedisStore(kv KV, key []byte) (*RedisStore, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("token store: want a 32-byte key, got %d bytes", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &RedisStore{kv: kv, aead: a}, nil
}

func opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), redisOpTimeout)
}

// Load implements Store.
func (s *RedisStore) Load(provider string) (*Entry, error) {
	ctx, cancel := opCtx()
	defer cancel()
	b, err := s.kv.Get(ctx, redisPrefix+provider)
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store (redis): %w", err)
	}
	e, err := open(s.aead, provider, b)
	if err != nil {
		return nil, err
	}
	registerSecrets(e)
	return e, nil
}

// Save implements Store.
func (s *RedisStore) Save(e *Entry) error {
	if e.Updated.IsZero() {
		e.Updated = time.Now().UTC()
	}
	sealed, err := seal(s.aead, e)
	if err != nil {
		return err
	}
	ctx, cancel := opCtx()
	defer cancel()
	if err := s.kv.Put(ctx, redisPrefix+e.Provider, sealed, 0); err != nil {
		return fmt.Errorf("token store (redis): %w", err)
	}
	return nil
}

// Delete implements Store.
func (s *RedisStore) Delete(provider string) error {
	ctx, cancel := opCtx()
	defer cancel()
	if err := s.kv.Delete(ctx, redisPrefix+provider); err != nil {
		return fmt.Errorf("token store (redis): %w", err)
	}
	return nil
}

// List implements Store, sorted by provider.
func (s *RedisStore) List() ([]*Entry, error) {
	ctx, cancel := opCtx()
	defer cancel()
	m, err := s.kv.Scan(ctx, redisPrefix)
	if err != nil {
		return nil, fmt.Errorf("token store (redis): %w", err)
	}
	var out []*Entry
	for k, sealed := range m {
		p := strings.TrimPrefix(k, redisPrefix)
		e, err := open(s.aead, p, sealed)
		if err != nil {
			return nil, err
		}
		registerSecrets(e)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out, nil
}

// Watch calls changed(provider) from its own goroutine when a login for
// provider appears or its access token changes, until ctx ends. It polls
// (one SCAN per PollEvery) rather than subscribing: the logins are a
// handful of keys, a poll survives Redis restarts and fallbacks without
// resubscribing, and a replica that was down catches up on its first poll.
func (s *RedisStore) Watch(ctx context.Context, changed func(provider string)) error {
	every := s.PollEvery
	if every <= 0 {
		every = DefaultPollEvery
	}
	// Redis away or an entry under another key: the next poll retries.
	snapshot := loginSnapshots(s.List, changed)
	snapshot(false)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				snapshot(true)
			}
		}
	}()
	return nil
}
