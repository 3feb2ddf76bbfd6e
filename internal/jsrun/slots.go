package jsrun

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Slots bound the scripts that run at once: in sum (Caps.Total) and per
// caller identity (Caps.PerIdentity). Each run holds a slot from its start
// to its end; every script process the server starts is a run's, so the
// caps bound the script processes, and their memory (at most Total ×
// Limits.Memory), whoever asks. A run over a cap waits up to Caps.Wait for
// a slot (in order, per identity), then is refused with a [*Busy] that says
// which cap and when to retry. The zero value is not usable: [NewSlots].
type Slots struct {
	mu      sync.Mutex
	caps    Caps
	total   int
	per     map[string]int // running, by identity
	holds   map[*hold]struct{}
	queue   []*waiter // waiting, oldest first
	waiting map[string]int
}

// Caps are a [Slots]' bounds. Zero fields take the defaults.
type Caps struct {
	// Total bounds the runs at once in sum (0: DefaultTotal()).
	Total int
	// PerIdentity bounds one identity's runs at once (0:
	// DefaultPerIdentity). More than Total is allowed: Total binds first.
	PerIdentity int
	// Wait is how long a run over a cap waits for a slot before it is
	// refused (0: DefaultWait; negative: refused at once).
	Wait time.Duration
}

// Slot defaults (code.maxConcurrent, code.maxPerIdentity).
const (
	// DefaultPerIdentity is one identity's share: an agent rarely runs
	// more than a few scripts at once, and four of them hold at most 1 GiB
	// at the default memory limit.
	DefaultPerIdentity = 4
	// DefaultWait is how long a run over a cap queues: a script that
	// ends in that time hands its slot over; longer, the caller is told
	// to retry.
	DefaultWait = 2 * time.Second
	// minTotal and maxTotal clamp DefaultTotal.
	minTotal, maxTotal = 4, 16
	// minRetryAfter is the least retry_after a refusal names.
	minRetryAfter = 100 * time.Millisecond
)

// DefaultTotal is the default sum cap: twice the processors Go may use
// (GOMAXPROCS, which follows a container's CPU quota), at least 4 (one
// identity's default share) and at most 16 (16 × the default 256 MiB is
// 4 GiB). A script's process is an interpreter that is busy on a core or
// waits on its tools.call: twice the cores keeps them busy without making
// every script slower than its deadline.
func DefaultTotal() int { return min(maxTotal, max(minTotal, 2*runtime.GOMAXPROCS(0))) }

func (c Caps) withDefaults() Caps {
	if c.Total <= 0 {
		c.Total = DefaultTotal()
	}
	if c.PerIdentity <= 0 {
		c.PerIdentity = DefaultPerIdentity
	}
	if c.Wait == 0 {
		c.Wait = DefaultWait
	}
	return c
}

// Which cap refused a run ([Busy.Cap]).
const (
	CapGlobal      = "global"
	CapPerIdentity = "per_identity"
)

// Busy is a run refused for want of a slot.
type Busy struct {
	// Cap is the cap that was full: CapPerIdentity when the caller had
	// its share running, else CapGlobal.
	Cap string
	// Limit is that cap, Running how many held it.
	Limit, Running int
	// Waited is how long the run queued (0: the queue was full, or
	// Caps.Wait is negative).
	Waited time.Duration
	// RetryAfter is how long the soonest-ending run that holds the cap
	// may still run (its deadline): a slot is free by then.
	RetryAfter time.Duration
}

func (b *Busy) Error() string {
	who := "in this process"
	if b.Cap == CapPerIdentity {
		who = "for this caller"
	}
	return fmt.Sprintf("%d scripts are already running %s (the most at once: %d); retry in %s",
		b.Running, who, b.Limit, b.RetryAfter.Round(time.Millisecond))
}

type hold struct {
	id    string
	until time.Time
}

type waiter struct {
	id    string
	d     time.Duration // the hold's length once granted
	ready chan struct{} // closed when h is set
	h     *hold
}

// NewSlots makes slots with caps c.
func NewSlots(c Caps) *Slots {
	return &Slots{caps: c.withDefaults(), per: map[string]int{}, holds: map[*hold]struct{}{}, waiting: map[string]int{}}
}

var serverSlots = sync.OnceValue(func() *Slots { return NewSlots(Caps{}) })

// ServerSlots are this process's slots: every script the server runs for
// a caller takes one (execute_javascript, whichever configuration
// generation serves it), so the caps hold in sum across reloads.
func ServerSlots() *Slots { return serverSlots() }

// SetCaps changes the caps (a reload): runs holding slots keep them; a
// raised cap admits waiting runs at once, a lowered one admits none until
// enough have ended.
func (s *Slots) SetCaps(c Caps) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = c.withDefaults()
	s.grantLocked()
}

// Caps are the caps in force (defaults filled in).
func (s *Slots) Caps() Caps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// Running is how many runs hold a slot, Waiting how many queue for one.
func (s *Slots) Running() (running, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, len(s.queue)
}

// RunningFor is how many runs identity holds.
func (s *Slots) RunningFor(identity string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.per[identity]
}

// Acquire takes a slot for a run of identity that ends within d (its
// deadline: for the retry_after of runs refused meanwhile). Over a cap it
// queues up to Caps.Wait; at most as many wait as may run (Total in sum,
// PerIdentity per identity), and past that it is refused at once. It
// returns the release, which must be called once the run has ended
// (further calls do nothing), or a [*Busy], or ctx's error when ctx ended
// first.
func (s *Slots) Acquire(ctx context.Context, identity string, d time.Duration) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.fitsLocked(identity) {
		h := s.takeLocked(identity, d)
		s.mu.Unlock()
		return s.releaser(h), nil
	}
	c := s.caps
	if c.Wait < 0 || len(s.queue) >= c.Total || s.waiting[identity] >= min(c.PerIdentity, c.Total) {
		b := s.busyLocked(identity, 0)
		s.mu.Unlock()
		return nil, b
	}
	w := &waiter{id: identity, d: d, ready: make(chan struct{})}
	s.queue = append(s.queue, w)
	s.waiting[identity]++
	s.mu.Unlock()

	start := time.Now()
	timer := time.NewTimer(c.Wait)
	defer timer.Stop()
	var cause error
	select {
	case <-w.ready:
		return s.releaser(w.h), nil
	case <-timer.C:
	case <-ctx.Done():
		cause = ctx.Err()
	}
	s.mu.Lock()
	if h := w.h; h != nil { // granted as the wait ended
		s.mu.Unlock()
		if cause != nil {
			s.release(h)
			return nil, cause
		}
		return s.releaser(h), nil
	}
	s.dequeueLocked(w)
	if cause != nil {
		s.mu.Unlock()
		return nil, cause
	}
	b := s.busyLocked(identity, time.Since(start))
	s.mu.Unlock()
	return nil, b
}

func (s *Slots) fitsLocked(id string) bool {
	return s.total < s.caps.Total && s.per[id] < s.caps.PerIdentity
}

func (s *Slots) takeLocked(id string, d time.Duration) *hold {
	h := &hold{id: id, until: time.Now().Add(d)}
	s.total++
	s.per[id]++
	s.holds[h] = struct{}{}
	return h
}

func (s *Slots) releaser(h *hold) func() {
	var once sync.Once
	return func() { once.Do(func() { s.release(h) }) }
}

func (s *Slots) release(h *hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.holds[h]; !ok {
		return
	}
	delete(s.holds, h)
	s.total--
	if s.per[h.id]--; s.per[h.id] <= 0 {
		delete(s.per, h.id)
	}
	s.grantLocked()
}

// grantLocked hands free slots to the waiting runs that fit, oldest first
// (one identity at its share does not hold up another's).
func (s *Slots) grantLocked() {
	for i := 0; i < len(s.queue) && s.total < s.caps.Total; {
		w := s.queue[i]
		if !s.fitsLocked(w.id) {
			i++
			continue
		}
		w.h = s.takeLocked(w.id, w.d)
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
		s.unwaitLocked(w.id)
		close(w.ready)
	}
}

func (s *Slots) dequeueLocked(w *waiter) {
	for i, q := range s.queue {
		if q == w {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			s.unwaitLocked(w.id)
			return
		}
	}
}

func (s *Slots) unwaitLocked(id string) {
	if s.waiting[id]--; s.waiting[id] <= 0 {
		delete(s.waiting, id)
	}
}

// busyLocked is the refusal of a run of id that does not fit: the cap
// that is full, and the soonest deadline among the runs that hold it.
func (s *Slots) busyLocked(id string, waited time.Duration) *Busy {
	b := &Busy{Cap: CapGlobal, Limit: s.caps.Total, Running: s.total, Waited: waited}
	if s.per[id] >= s.caps.PerIdentity {
		b.Cap, b.Limit, b.Running = CapPerIdentity, s.caps.PerIdentity, s.per[id]
	}
	var soonest time.Time
	for h := range s.holds {
		if (b.Cap == CapGlobal || h.id == id) && (soonest.IsZero() || h.until.Before(soonest)) {
			soonest = h.until
		}
	}
	b.RetryAfter = max(minRetryAfter, time.Until(soonest))
	if soonest.IsZero() { // nothing holds it: the caps just changed
		b.RetryAfter = minRetryAfter
	}
	return b
}
