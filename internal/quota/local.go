package quota

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/agent-tools/agent-tools/internal/config"
)

// Local is one process's quota state: token buckets
// (golang.org/x/time/rate), calls in flight and token windows. It outlives
// a configuration reload (the app keeps one); a quota whose definition
// changed has new keys, so it starts afresh.
type Local struct {
	mu       sync.Mutex
	buckets  map[string]*rate.Limiter
	inFlight map[string]int
	windows  map[string]*tokenWindow
}

type tokenWindow struct {
	n   int64
	end time.Time
}

// sweepAbove bounds the maps: above it, spent windows and full buckets
// (which hold nothing a fresh one would not) are dropped.
const sweepAbove = 4096

// NewLocal returns empty local state.
func NewLocal() *Local {
	return &Local{buckets: map[string]*rate.Limiter{}, inFlight: map[string]int{}, windows: map[string]*tokenWindow{}}
}

// take takes one token of key's bucket at now, or says how long until one.
func (s *Local) take(key string, per config.PerPeriod, burst int, now time.Time) (bool, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeLocked(key, per, burst, now)
}

func (s *Local) takeLocked(key string, per config.PerPeriod, burst int, now time.Time) (bool, time.Duration) {
	b := s.buckets[key]
	if b == nil {
		if len(s.buckets) >= sweepAbove {
			for k, old := range s.buckets {
				if old.TokensAt(now) >= float64(old.Burst()) {
					delete(s.buckets, k)
				}
			}
		}
		b = rate.NewLimiter(rate.Limit(float64(per.N)/per.Period.Seconds()), burst)
		b.SetLimitAt(now, b.Limit()) // the bucket starts full at now (a fake clock may be anywhere)
		s.buckets[key] = b
	}
	if b.AllowN(now, 1) { // the common case: no Reservation allocated
		return true, 0
	}
	r := b.ReserveN(now, 1)
	if !r.OK() {
		return false, per.Period
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0 // a token came in between (cannot happen at one now)
}

func (s *Local) acquire(key string, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acquireLocked(key, limit)
}

func (s *Local) acquireLocked(key string, limit int) bool {
	if s.inFlight[key] >= limit {
		return false
	}
	s.inFlight[key]++
	return true
}

func (s *Local) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(key)
}

func (s *Local) releaseLocked(key string) {
	if s.inFlight[key] <= 1 {
		delete(s.inFlight, key)
		return
	}
	s.inFlight[key]--
}

func (s *Local) used(key string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usedLocked(key)
}

func (s *Local) usedLocked(key string) int64 {
	if w := s.windows[key]; w != nil {
		return w.n
	}
	return 0
}

func (s *Local) add(key string, n int64, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(key, n, end)
}

func (s *Local) addLocked(key string, n int64, end time.Time) {
	w := s.windows[key]
	if w == nil {
		if len(s.windows) >= sweepAbove {
			for k, old := range s.windows {
				if !old.end.After(end.Add(-24 * time.Hour)) { // ended a day or more before this window would
					delete(s.windows, k)
				}
			}
		}
		w = &tokenWindow{end: end}
		s.windows[key] = w
	}
	w.n += n
}
