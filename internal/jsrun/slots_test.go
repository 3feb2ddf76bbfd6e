package jsrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestDefaultTotal(t *testing.T) {
	if n := DefaultTotal(); n < minTotal || n > maxTotal {
		t.Fatalf("DefaultTotal() = %d, want %d..%d", n, minTotal, maxTotal)
	}
	c := NewSlots(Caps{}).Caps()
	if c.Total != DefaultTotal() || c.PerIdentity != DefaultPerIdentity || c.Wait != DefaultWait {
		t.Fatalf("zero caps = %+v", c)
	}
}

// The slots' bookkeeping: a refusal names the cap that is full and the
// soonest deadline that frees it; a queued run gets the slot a run hands
// over; the queue is bounded; release is idempotent; raising a cap admits
// at once.
func TestSlots(t *testing.T) {
	ctx := context.Background()
	s := NewSlots(Caps{Total: 3, PerIdentity: 2, Wait: -1})
	a1 := must(t)(s.Acquire(ctx, "a", time.Hour))
	a2 := must(t)(s.Acquire(ctx, "a", 5*time.Second))
	_, err := s.Acquire(ctx, "a", time.Hour)
	b := busy(t, err)
	if b.Cap != CapPerIdentity || b.Limit != 2 || b.Running != 2 || b.Waited != 0 ||
		b.RetryAfter > 5*time.Second || b.RetryAfter < 4*time.Second {
		t.Fatalf("a's third: %+v", b)
	}
	b1 := must(t)(s.Acquire(ctx, "b", 10*time.Second))
	_, err = s.Acquire(ctx, "c", time.Hour)
	if b := busy(t, err); b.Cap != CapGlobal || b.Limit != 3 || b.Running != 3 || b.RetryAfter > 5*time.Second {
		t.Fatalf("c over the global cap: %+v", b)
	}
	a2()
	a2() // a second call does nothing
	if r, _ := s.Running(); r != 2 || s.RunningFor("a") != 1 {
		t.Fatalf("after a release: running %d, a %d", r, s.RunningFor("a"))
	}

	// Queued: a waiter gets the slot a run ends with, before the wait runs out.
	s.SetCaps(Caps{Total: 3, PerIdentity: 1, Wait: time.Minute})
	got := make(chan func(), 1)
	go func() {
		rel, err := s.Acquire(ctx, "a", time.Hour)
		if err != nil {
			t.Error(err)
		}
		got <- rel
	}()
	waitFor(t, func() bool { _, w := s.Running(); return w == 1 })
	// The queue holds as many per identity as may run: a's next is refused at once.
	if _, err := s.Acquire(ctx, "a", time.Hour); busy(t, err).Waited != 0 {
		t.Fatalf("a second waiter of a waited: %v", err)
	}
	a1()
	a3 := <-got
	if s.RunningFor("a") != 1 {
		t.Fatalf("the waiter holds nothing")
	}

	// Raising a cap admits a waiter at once.
	go func() {
		rel, err := s.Acquire(ctx, "a", time.Hour)
		if err != nil {
			t.Error(err)
		}
		got <- rel
	}()
	waitFor(t, func() bool { _, w := s.Running(); return w == 1 })
	s.SetCaps(Caps{Total: 3, PerIdentity: 2, Wait: time.Minute})
	a4 := <-got

	// A cancelled wait leaves nothing behind.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := s.Acquire(cctx, "d", time.Hour); done <- err }()
	waitFor(t, func() bool { _, w := s.Running(); return w == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	for _, rel := range []func(){a3, a4, b1} {
		rel()
	}
	if r, w := s.Running(); r != 0 || w != 0 || len(s.per) != 0 || len(s.waiting) != 0 || len(s.holds) != 0 {
		t.Fatalf("leaked: running %d waiting %d per %v waiting %v holds %d", r, w, s.per, s.waiting, len(s.holds))
	}
	if _, err := s.Acquire(cctx, "a", time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context took a slot: %v", err)
	}
}

// Under load, with waits that run out, cancellations and hand-overs, no
// more than the caps ever hold, and everything returns to zero (run with
// -race).
func TestSlotsConcurrent(t *testing.T) {
	const total, per, ids, workers = 5, 2, 4, 64
	s := NewSlots(Caps{Total: total, PerIdentity: per, Wait: 20 * time.Millisecond})
	var (
		inAll  atomic.Int32
		inID   [ids]atomic.Int32
		ok     atomic.Int32
		refuse atomic.Int32
		wg     sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 40 {
				id := r.IntN(ids)
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(30))*time.Millisecond)
				rel, err := s.Acquire(ctx, fmt.Sprint(id), time.Second)
				cancel()
				var b *Busy
				switch {
				case errors.As(err, &b):
					refuse.Add(1)
					continue
				case err != nil:
					continue
				}
				ok.Add(1)
				if n := inAll.Add(1); n > total {
					t.Errorf("%d running, cap %d", n, total)
				}
				if n := inID[id].Add(1); n > per {
					t.Errorf("identity %d: %d running, cap %d", id, n, per)
				}
				time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond) // the run's work
				inID[id].Add(-1)
				inAll.Add(-1)
				rel()
			}
		})
	}
	wg.Wait()
	if r, w := s.Running(); r != 0 || w != 0 || len(s.per) != 0 || len(s.waiting) != 0 {
		t.Fatalf("leaked: running %d waiting %d per %v waiting %v", r, w, s.per, s.waiting)
	}
	if ok.Load() == 0 || refuse.Load() == 0 {
		t.Fatalf("admitted %d, refused %d: the load did not reach the caps", ok.Load(), refuse.Load())
	}
}

func must(t *testing.T) func(func(), error) func() {
	return func(rel func(), err error) func() {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return rel
	}
}

func busy(t *testing.T, err error) *Busy {
	t.Helper()
	var b *Busy
	if !errors.As(err, &b) {
		t.Fatalf("want *Busy, got %v", err)
	}
	return b
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}
