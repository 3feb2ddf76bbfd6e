package provider_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
)

func TestFreshness(t *testing.T) {
	var ns atomic.Int64
	ns.Store(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixNano())
	f := &provider.Freshness{Now: func() time.Time { return time.Unix(0, ns.Load()) }}
	if f.Fresh(0) {
		t.Fatal("fresh before any listing")
	}
	l := f.Begin()
	if f.Fresh(0) {
		t.Fatal("fresh while the first listing runs")
	}
	f.Done(l)
	if !f.Fresh(0) || !f.Fresh(time.Second) {
		t.Fatal("not fresh after a listing")
	}
	if f.Fresh(-1) {
		t.Fatal("a negative age is never fresh")
	}

	ns.Add(int64(time.Second))
	if !f.Fresh(0) {
		t.Error("maxAge 0 expired")
	}
	if f.Fresh(time.Second) {
		t.Error("fresh a whole maxAge after the listing began")
	}
	if !f.Fresh(2 * time.Second) {
		t.Error("not fresh within maxAge")
	}

	f.Changed()
	if f.Fresh(0) {
		t.Fatal("fresh after Changed")
	}
	f.Done(f.Begin())
	if !f.Fresh(0) {
		t.Fatal("not fresh after a listing that began after Changed")
	}

	// A change heard while a listing runs is not lost.
	l = f.Begin()
	f.Changed()
	f.Done(l)
	if f.Fresh(0) {
		t.Fatal("a listing that began before a change made the provider fresh")
	}
	f.Done(f.Begin())
	if !f.Fresh(0) {
		t.Fatal("not fresh after the next listing")
	}

	// The age is counted from when the listing began, not ended.
	l = f.Begin()
	ns.Add(int64(time.Second))
	f.Done(l)
	if f.Fresh(time.Second) {
		t.Error("age counted from the end of a slow listing")
	}
}

// TestFreshnessConcurrent: listings, changes and reads at once (run with
// -race); after the last change, a listing makes it fresh.
func TestFreshnessConcurrent(t *testing.T) {
	var f provider.Freshness
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 1000 {
				f.Done(f.Begin())
				f.Fresh(time.Second)
			}
		}()
		go func() {
			defer wg.Done()
			for range 1000 {
				f.Changed()
			}
		}()
	}
	wg.Wait()
	f.Changed()
	if f.Fresh(0) {
		t.Fatal("fresh after the last change")
	}
	f.Done(f.Begin())
	if !f.Fresh(0) {
		t.Fatal("not fresh after the last listing")
	}
}
