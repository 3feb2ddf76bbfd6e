package state

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Pinger is a shared store that can say whether it is reachable.
type Pinger interface {
	Store
	Ping(ctx context.Context) error
}

// Fallback uses Shared while it answers and Local otherwise: an operation
// that fails on Shared is redone on Local, the outage is logged once, and
// Status reports degraded with the reason. While degraded, Shared is probed
// at most once per ProbeEvery; the first answer switches back. State written
// locally during an outage stays local (counts restart from the shared ones):
// availability over exactness, which is the right trade for a loop guard and
// rate limits, and for single-use tokens it can at worst let a token issued
// before the outage be used once more on another replica.
type Fallback struct {
	Shared Pinger
	Local  Store
	Log    *slog.Logger
	// ProbeEvery bounds how often a degraded store retries Shared (0 = 1s).
	ProbeEvery time.Duration
	Now        func() time.Time

	mu        sync.Mutex
	degraded  bool
	reason    string
	lastProbe time.Time
}

var _ Store = (*Fallback)(nil)
var _ Reporter = (*Fallback)(nil)
var _ Bus = (*Fallback)(nil)

// NewFallback returns a store over shared with an in-memory local fallback.
func NewFallback(shared Pinger, log *slog.Logger) *Fallback {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Fallback{Shared: shared, Local: NewMemory(), Log: log}
}

// Status implements Reporter.
func (f *Fallback) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.degraded {
		return Status{Backend: "memory", Degraded: true, Reason: f.reason}
	}
	return Status{Backend: "redis", Shared: true}
}

// Check pings Shared now (for /readyz) and updates the status.
func (f *Fallback) Check(ctx context.Context) Status {
	ctx, cancel := context.WithTimeout(ctx, OpTimeout)
	defer cancel()
	err := f.Shared.Ping(ctx)
	f.mu.Lock()
	f.lastProbe = f.now()
	f.mu.Unlock()
	if err != nil {
		f.fail(err)
	} else {
		f.recover()
	}
	return f.Status()
}

func (f *Fallback) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// pick returns the store to use now, probing Shared when it is time.
func (f *Fallback) pick(ctx context.Context) Store {
	f.mu.Lock()
	if !f.degraded {
		f.mu.Unlock()
		return f.Shared
	}
	every := f.ProbeEvery
	if every <= 0 {
		every = time.Second
	}
	probe := f.now().Sub(f.lastProbe) >= every
	if probe {
		f.lastProbe = f.now()
	}
	f.mu.Unlock()
	if probe {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), OpTimeout)
		err := f.Shared.Ping(pctx)
		cancel()
		if err == nil {
			f.recover()
			return f.Shared
		}
	}
	return f.Local
}

func (f *Fallback) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.degraded {
		f.Log.Error("shared state unreachable: this replica uses local state until it answers", "err", err)
	}
	f.degraded, f.reason, f.lastProbe = true, err.Error(), f.now()
}

func (f *Fallback) recover() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.degraded {
		f.Log.Warn("shared state reachable again", "was", f.reason)
	}
	f.degraded, f.reason = false, ""
}

// do runs op on the chosen store, redoing it locally if Shared fails.
func do[T any](ctx context.Context, f *Fallback, op func(context.Context, Store) (T, error)) (T, error) {
	s := f.pick(ctx)
	if s == f.Local {
		return op(ctx, s)
	}
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), OpTimeout)
	v, err := op(octx, s)
	cancel()
	if err == nil || err == ErrNotFound {
		return v, err
	}
	f.fail(err)
	return op(ctx, f.Local)
}

// Incr implements Store.
func (f *Fallback) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	return do(ctx, f, func(ctx context.Context, s Store) (int64, error) { return s.Incr(ctx, key, ttl) })
}

// Count implements Store.
func (f *Fallback) Count(ctx context.Context, key string) (int64, error) {
	return do(ctx, f, func(ctx context.Context, s Store) (int64, error) { return s.Count(ctx, key) })
}

// Delete implements Store.
func (f *Fallback) Delete(ctx context.Context, keys ...string) error {
	_, err := do(ctx, f, func(ctx context.Context, s Store) (struct{}, error) { return struct{}{}, s.Delete(ctx, keys...) })
	return err
}

// Once implements Store.
func (f *Fallback) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return do(ctx, f, func(ctx context.Context, s Store) (bool, error) { return s.Once(ctx, key, ttl) })
}

// Claim implements Store.
func (f *Fallback) Claim(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	return do(ctx, f, func(ctx context.Context, s Store) (bool, error) { return s.Claim(ctx, key, value, ttl) })
}

// Publish implements Bus on Shared while it answers (a degraded replica's
// wake-ups would reach nobody; listeners poll).
func (f *Fallback) Publish(ctx context.Context, topic, msg string) error {
	b, ok := f.Shared.(Bus)
	if !ok || f.Status().Degraded {
		return nil
	}
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), OpTimeout)
	defer cancel()
	return b.Publish(octx, topic, msg)
}

// Listen implements Bus on Shared, which resubscribes by itself after an
// outage.
func (f *Fallback) Listen(ctx context.Context, topic string, fn func(msg string)) {
	if b, ok := f.Shared.(Bus); ok {
		b.Listen(ctx, topic, fn)
	}
}

// Take implements Store.
func (f *Fallback) Take(ctx context.Context, key string, rate float64, burst int) (bool, time.Duration, error) {
	type r struct {
		ok   bool
		wait time.Duration
	}
	v, err := do(ctx, f, func(ctx context.Context, s Store) (r, error) {
		ok, wait, err := s.Take(ctx, key, rate, burst)
		return r{ok, wait}, err
	})
	return v.ok, v.wait, err
}

// Put implements Store.
func (f *Fallback) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	_, err := do(ctx, f, func(ctx context.Context, s Store) (struct{}, error) { return struct{}{}, s.Put(ctx, key, value, ttl) })
	return err
}

// Get implements Store.
func (f *Fallback) Get(ctx context.Context, key string) ([]byte, error) {
	return do(ctx, f, func(ctx context.Context, s Store) ([]byte, error) { return s.Get(ctx, key) })
}

// Scan implements Store.
func (f *Fallback) Scan(ctx context.Context, prefix string) (map[string][]byte, error) {
	return do(ctx, f, func(ctx context.Context, s Store) (map[string][]byte, error) { return s.Scan(ctx, prefix) })
}
