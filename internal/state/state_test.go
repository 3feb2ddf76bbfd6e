package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/redistest"
)

// contract runs the same assertions against every Store.
func contract(t *testing.T, s Store) {
	ctx := context.Background()
	t.Run("incr", func(t *testing.T) {
		for want := int64(1); want <= 3; want++ {
			n, err := s.Incr(ctx, "c1", time.Minute)
			if err != nil || n != want {
				t.Fatalf("Incr = %d, %v; want %d", n, err, want)
			}
		}
		if n, _ := s.Count(ctx, "c1"); n != 3 {
			t.Errorf("Count = %d", n)
		}
		if err := s.Delete(ctx, "c1", "absent"); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Count(ctx, "c1"); n != 0 {
			t.Errorf("Count after Delete = %d", n)
		}
	})
	t.Run("once", func(t *testing.T) {
		var wins int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if ok, err := s.Once(ctx, "tok1", time.Minute); err == nil && ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Errorf("%d winners, want exactly 1", wins)
		}
	})
	t.Run("claim", func(t *testing.T) {
		var mu sync.Mutex
		var winners []string
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := fmt.Sprint("answer-", i)
				if ok, err := s.Claim(ctx, "decision:1", []byte(v), time.Minute); err == nil && ok {
					mu.Lock()
					winners = append(winners, v)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("%d winners, want exactly 1", len(winners))
		}
		if b, err := s.Get(ctx, "decision:1"); err != nil || string(b) != winners[0] {
			t.Errorf("Get = %q, %v; want the winner's %q", b, err, winners[0])
		}
		if ok, err := s.Claim(ctx, "decision:2", nil, time.Minute); err != nil || !ok {
			t.Fatalf("claim with an empty value: %v %v", ok, err)
		}
		if b, err := s.Get(ctx, "decision:2"); err != nil || len(b) != 0 {
			t.Errorf("an empty claim reads back as %q, %v", b, err)
		}
	})
	if b, ok := s.(Bus); ok {
		t.Run("bus", func(t *testing.T) { busContract(t, b) })
	}
	t.Run("take", func(t *testing.T) {
		allowed := 0
		var wait time.Duration
		for range 5 {
			ok, w, err := s.Take(ctx, "bucket", 0.5, 3)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				allowed++
			} else {
				wait = w
			}
		}
		if allowed != 3 {
			t.Errorf("allowed %d of 5 with burst 3", allowed)
		}
		if wait <= 0 || wait > 2*time.Second+50*time.Millisecond {
			t.Errorf("wait = %v, want about 2s", wait)
		}
	})
	t.Run("put get scan", func(t *testing.T) {
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get absent: %v", err)
		}
		for i := range 3 {
			if err := s.Put(ctx, fmt.Sprintf("replica:%d", i), []byte{byte('a' + i)}, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		_ = s.Put(ctx, "replicaX", []byte("other"), time.Minute)
		got, err := s.Scan(ctx, "replica:")
		if err != nil || len(got) != 3 || string(got["replica:1"]) != "b" {
			t.Errorf("Scan = %q, %v", got, err)
		}
		if b, err := s.Get(ctx, "replica:2"); err != nil || string(b) != "c" {
			t.Errorf("Get = %q, %v", b, err)
		}
	})
}

// busContract: a listener gets what is published on its topic, not
// another topic's, and stops when its context ends. A subscription may
// start after Listen returns (Redis), so the first message is published
// until one arrives, within a deadline.
func busContract(t *testing.T, b Bus) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 16)
	b.Listen(ctx, "t1", func(msg string) { got <- msg })
	other := make(chan string, 16)
	b.Listen(ctx, "t2", func(msg string) { other <- msg })
	deadline := time.Now().Add(10 * time.Second)
	for first := false; !first; {
		if time.Now().After(deadline) {
			t.Fatal("nothing received in 10 s")
		}
		if err := b.Publish(ctx, "t1", "hello"); err != nil {
			t.Fatal(err)
		}
		select {
		case msg := <-got:
			first = msg == "hello"
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := b.Publish(ctx, "t1", "second"); err != nil {
		t.Fatal(err)
	}
	for msg := range got {
		if msg == "second" {
			break
		}
		if msg != "hello" {
			t.Fatalf("unexpected message %q", msg)
		}
	}
	select {
	case msg := <-other:
		t.Fatalf("topic t2 got %q", msg)
	default:
	}
}

func TestMemory(t *testing.T) { contract(t, NewMemory()) }

func TestMemoryExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	m := &Memory{Now: func() time.Time { return now }, MaxKeys: 2}
	ctx := context.Background()
	if _, err := m.Incr(ctx, "a", time.Second); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	if n, _ := m.Count(ctx, "a"); n != 0 {
		t.Errorf("expired counter = %d", n)
	}
	if ok, _ := m.Once(ctx, "t", time.Second); !ok {
		t.Fatal("first Once refused")
	}
	now = now.Add(2 * time.Second)
	if ok, _ := m.Once(ctx, "t", time.Second); !ok {
		t.Error("Once after expiry refused")
	}
	// Bounded: a third key evicts one of the first two.
	if err := m.Put(ctx, "x", []byte("1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, "y", []byte("1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, "z", []byte("1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if len(m.m) > 2 {
		t.Errorf("%d keys, MaxKeys 2", len(m.m))
	}
	// A bucket refills at its rate.
	for range 2 {
		if _, _, err := m.Take(ctx, "b", 1, 2); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _, _ := m.Take(ctx, "b", 1, 2); ok {
		t.Error("empty bucket allowed")
	}
	now = now.Add(1100 * time.Millisecond)
	if ok, _, _ := m.Take(ctx, "b", 1, 2); !ok {
		t.Error("refilled bucket refused")
	}
}

func TestRedis(t *testing.T) {
	srv := redistest.Start(t)
	r, err := NewRedis(srv.URL, fmt.Sprintf("test-%d:", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	contract(t, r)
}

// TestFallbackContract: the fallback over a live Redis is a Store and a
// Bus like the others.
func TestFallbackContract(t *testing.T) {
	srv := redistest.Start(t)
	r, err := NewRedis(srv.URL, fmt.Sprintf("fbc-%d:", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	contract(t, NewFallback(r, nil))
}

func TestNewRedisBadURL(t *testing.T) {
	_, err := NewRedis("redis://user:s3cretpass@[bad", "")
	if err == nil {
		t.Fatal("no error")
	}
	if got := err.Error(); got == "" || strings.Contains(got, "s3cretpass") {
		t.Errorf("error leaks or is empty: %q", got)
	}
}

// TestFallback kills Redis mid-test: operations keep answering from local
// state, the status says degraded, and it recovers when Redis returns.
func TestFallback(t *testing.T) {
	srv := redistest.Start(t)
	r, err := NewRedis(srv.URL, "fb:")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	now := time.Unix(0, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := NewFallback(r, slog.New(slog.DiscardHandler))
	f.Now = clock
	ctx := context.Background()
	if n, err := f.Incr(ctx, "k", time.Minute); err != nil || n != 1 {
		t.Fatalf("Incr = %d, %v", n, err)
	}
	if st := f.Status(); st.Degraded || !st.Shared {
		t.Fatalf("status = %+v", st)
	}
	srv.Stop()
	if n, err := f.Incr(ctx, "k", time.Minute); err != nil || n != 1 {
		t.Fatalf("Incr during outage = %d, %v (want a fresh local count)", n, err)
	}
	st := f.Status()
	if !st.Degraded || st.Reason == "" || st.Backend != "memory" {
		t.Fatalf("status during outage = %+v", st)
	}
	if st := f.Check(ctx); !st.Degraded {
		t.Fatalf("Check during outage = %+v", st)
	}
	srv.Restart()
	mu.Lock()
	now = now.Add(2 * time.Second) // past ProbeEvery
	mu.Unlock()
	if n, err := f.Incr(ctx, "k2", time.Minute); err != nil || n != 1 {
		t.Fatalf("Incr after recovery = %d, %v", n, err)
	}
	if st := f.Status(); st.Degraded {
		t.Fatalf("status after recovery = %+v", st)
	}
	if n, _ := r.Count(ctx, "k2"); n != 1 {
		t.Errorf("the write after recovery did not reach Redis (count %d)", n)
	}
}
