package policy

import (
	"context"
	"encoding/hex"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/state"
)

// LoopGuard stops a caller from repeating the same failing call (an earlier prototype saw one
// run retried a malformed call 1,022 times). Calls are identified by an opaque
// key built by the caller (identity + session + tool + canonical argument
// hash).
//
// From the RepeatAfter-th identical failure the caller escalates the error to
// REPEATED_FAILURE; once RefuseAfter failures accumulated, the call is refused
// without running until CoolDown has passed since the last failure. A success
// forgets the key. Counts live in Store: with Redis, identical failures spread
// over replicas add up.
type LoopGuard struct {
	RepeatAfter int
	RefuseAfter int
	CoolDown    time.Duration
	// MaxKeys bounds the in-memory store's size (used when Store is nil).
	MaxKeys int
	Now     func() time.Time
	// Store holds the counters (nil = memory of this process, created on
	// first use with MaxKeys and Now).
	Store state.Store

	once sync.Once
}

// NewLoopGuard returns a guard with the documented defaults: escalate at the 3rd
// identical failure, refuse from the 6th for one minute.
func NewLoopGuard() *LoopGuard {
	return &LoopGuard{RepeatAfter: 3, RefuseAfter: 6, CoolDown: time.Minute, MaxKeys: 10000, Now: time.Now}
}

func (g *LoopGuard) store() state.Store {
	g.once.Do(func() {
		if g.Store == nil {
			now := g.Now
			if now == nil {
				now = time.Now
			}
			g.Store = &state.Memory{MaxKeys: g.MaxKeys, Now: func() time.Time { return now() }}
		}
	})
	return g.Store
}

func guardKey(key string) string { return "lg:" + hex.EncodeToString([]byte(key)) }

// Refused reports whether key is cooling down, with the failure count so far.
func (g *LoopGuard) Refused(key string) (bool, int) {
	n, err := g.store().Count(context.Background(), guardKey(key))
	if err != nil {
		return false, 0 // state unavailable: never refuse because of it
	}
	return int(n) >= g.RefuseAfter && g.RefuseAfter > 0, int(n)
}

// Failed records a failure and returns how many identical failures key has
// now. The count expires CoolDown after the last failure.
func (g *LoopGuard) Failed(key string) int {
	ttl := g.CoolDown
	if ttl <= 0 {
		ttl = time.Minute
	}
	n, err := g.store().Incr(context.Background(), guardKey(key), ttl)
	if err != nil {
		return 0
	}
	return int(n)
}

// Succeeded forgets key.
func (g *LoopGuard) Succeeded(key string) {
	_ = g.store().Delete(context.Background(), guardKey(key))
}

// Escalate reports whether a failure count has reached the REPEATED_FAILURE threshold.
func (g *LoopGuard) Escalate(count int) bool { return g.RepeatAfter > 0 && count >= g.RepeatAfter }
