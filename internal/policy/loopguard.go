package policy

import (
	"sync"
	"time"
)

// LoopGuard stops a session from repeating the same failing call (seed 000: one
// run retried a malformed call 1,022 times). Calls are identified by an opaque
// key built by the caller (session + tool + argument hash).
//
// From the RepeatAfter-th identical failure the caller escalates the error to
// REPEATED_FAILURE; once RefuseAfter failures accumulated, the call is refused
// without running until CoolDown has passed since the last failure. A success
// forgets the key.
type LoopGuard struct {
	RepeatAfter int
	RefuseAfter int
	CoolDown    time.Duration
	// MaxKeys bounds memory; the stalest keys are dropped first.
	MaxKeys int
	Now     func() time.Time

	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	count int
	last  time.Time
}

// NewLoopGuard returns a guard with the documented defaults: escalate at the 3rd
// identical failure, refuse from the 6th for one minute.
func NewLoopGuard() *LoopGuard {
	return &LoopGuard{RepeatAfter: 3, RefuseAfter: 6, CoolDown: time.Minute, MaxKeys: 10000, Now: time.Now}
}

// Refused reports whether key is cooling down, with the failure count so far.
func (g *LoopGuard) Refused(key string) (bool, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.keys[key]
	if f == nil {
		return false, 0
	}
	if g.Now().Sub(f.last) >= g.CoolDown {
		// The cool-down passed: give the call a fresh start.
		delete(g.keys, key)
		return false, 0
	}
	return f.count >= g.RefuseAfter, f.count
}

// Failed records a failure and returns how many identical failures key has now.
func (g *LoopGuard) Failed(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keys == nil {
		g.keys = map[string]*failures{}
	}
	f := g.keys[key]
	if f == nil {
		if g.MaxKeys > 0 && len(g.keys) >= g.MaxKeys {
			g.evictLocked()
		}
		f = &failures{}
		g.keys[key] = f
	}
	f.count++
	f.last = g.Now()
	return f.count
}

// Succeeded forgets key.
func (g *LoopGuard) Succeeded(key string) {
	g.mu.Lock()
	delete(g.keys, key)
	g.mu.Unlock()
}

// evictLocked drops every key older than the cool-down, or the stalest one if none is.
func (g *LoopGuard) evictLocked() {
	now := g.Now()
	var stalest string
	var stalestAt time.Time
	for k, f := range g.keys {
		if now.Sub(f.last) >= g.CoolDown {
			delete(g.keys, k)
			continue
		}
		if stalest == "" || f.last.Before(stalestAt) {
			stalest, stalestAt = k, f.last
		}
	}
	if len(g.keys) >= g.MaxKeys && stalest != "" {
		delete(g.keys, stalest)
	}
}

// Escalate reports whether a failure count has reached the REPEATED_FAILURE threshold.
func (g *LoopGuard) Escalate(count int) bool { return count >= g.RepeatAfter }
