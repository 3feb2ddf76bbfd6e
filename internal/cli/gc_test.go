package cli

import (
	"slices"
	"testing"
	"time"
)

// Start-up garbage is returned at the first look, and again at a later look
// only when start-up work (a cold listing that ended late) allocated
// enough since the previous one; the looks end at startupWatch.
func TestReleaseStartupGarbage(t *testing.T) {
	var pending []func()
	var delays []time.Duration
	after := func(d time.Duration, f func()) *time.Timer {
		delays = append(delays, d)
		pending = append(pending, f)
		return nil
	}
	var allocated uint64
	var freedAt []int
	look := 0
	release := func() { freedAt = append(freedAt, look) }
	releaseStartupGarbage(after, func() uint64 { return allocated }, release)
	// What is allocated before each look: start-up, then calls, then a late
	// listing, then nothing.
	work := map[int]uint64{1: 200 << 20, 2: 1 << 20, 3: 1 << 20, 4: 120 << 20, 5: startupWork - 1, 6: startupWork}
	for len(pending) > 0 {
		f := pending[0]
		pending = pending[1:]
		look++
		allocated += work[look]
		f()
	}
	if want := []int{1, 4, 6}; !slices.Equal(freedAt, want) {
		t.Errorf("released at looks %v, want %v", freedAt, want)
	}
	if n := int(startupWatch / startupSettle); look != n {
		t.Errorf("%d looks, want %d (until %s)", look, n, startupWatch)
	}
	for _, d := range delays {
		if d != startupSettle {
			t.Fatalf("a look after %s", d)
		}
	}
	if heapAllocs() == 0 {
		t.Error("heapAllocs reads nothing")
	}
}
