// Package state is the runtime's shared state: counters that expire (the
// loop guard), single-use markers (confirmation tokens), token buckets (rate
// limits) and small keyed values (the session registry, replica records).
//
// One process keeps it in memory ([Memory]). With server.redis configured it
// lives in Redis ([Redis]) so that every replica behind a load balancer sees
// the same counts, buckets and used tokens; [Fallback] wraps the two so that
// a Redis outage degrades to local state — logged once, reported by /readyz
// and doctor — and never fails a call.
package state

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Get for an absent or expired key.
var ErrNotFound = errors.New("state: key not found")

// Store is the shared state the runtime needs. Every key is a plain string
// chosen by the caller (hash anything that could be large or secret before
// using it as a key); implementations add their own namespace prefix.
type Store interface {
	// Incr adds one to the counter key, (re)sets its expiry to ttl, and
	// returns the new count: one atomic step.
	Incr(ctx context.Context, key string, ttl time.Duration) (int64, error)
	// Count returns the counter key (0 when absent or expired).
	Count(ctx context.Context, key string) (int64, error)
	// Delete removes keys (absent ones are ignored).
	Delete(ctx context.Context, keys ...string) error
	// Once marks key used for ttl. It reports false when key already was:
	// exactly one caller, on any replica, wins.
	Once(ctx context.Context, key string, ttl time.Duration) (bool, error)
	// Claim stores value under key for ttl only if key is absent, and
	// reports whether it did: as with Once exactly one caller wins, and Get
	// then reads what the winner stored (a decision made once, on any
	// replica, that every replica can read).
	Claim(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	// Take takes one token from the bucket key, refilled at rate tokens per
	// second up to burst. When it refuses, wait is how long until a token.
	Take(ctx context.Context, key string, rate float64, burst int) (ok bool, wait time.Duration, err error)
	// Put stores value under key for ttl; Get reads it back (ErrNotFound).
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Get(ctx context.Context, key string) ([]byte, error)
	// Scan returns every live key with the prefix and its value. It is for
	// small sets (the replicas of a cluster), not for whole namespaces.
	Scan(ctx context.Context, prefix string) (map[string][]byte, error)
}

// Bus carries wake-ups between the processes that share a store: a message
// published on a topic reaches every listener of that topic, in this
// process and on every replica using the same Redis. Delivery is at most
// once and can be lost (a reconnect, an outage): a bus only makes a change
// arrive sooner, and whoever listens also reads the store, on a short
// bounded poll, for the truth.
type Bus interface {
	// Publish sends msg to the topic's listeners.
	Publish(ctx context.Context, topic, msg string) error
	// Listen calls f with every message on topic, from one goroutine of its
	// own (f must not block long), until ctx ends.
	Listen(ctx context.Context, topic string, f func(msg string))
}

// Status says where state lives right now, for /readyz and doctor.
type Status struct {
	// Backend is "memory" or "redis".
	Backend string `json:"backend"`
	// Shared is true while state is shared with other replicas.
	Shared bool `json:"shared"`
	// Degraded is true when Redis is configured but unreachable, so this
	// replica runs on local state; Reason says why (never a credential).
	Degraded bool   `json:"degraded,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Reporter is implemented by stores that can say where state lives.
type Reporter interface {
	Status() Status
}

// OpTimeout bounds one state operation so that a slow Redis never holds a
// call up for long (the caller then falls back to local state).
const OpTimeout = 250 * time.Millisecond
