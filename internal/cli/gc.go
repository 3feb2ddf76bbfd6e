package cli

import (
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
)

// applyGC sets the garbage collector for serve from server.gc (defaults in
// config.DefaultGCPercent and config.DefaultGCMemoryLimit). GOGC and
// GOMEMLIMIT in the environment win, as for any Go program.
func applyGC(g config.GC, lookup func(string) (string, bool)) {
	if _, set := lookup("GOGC"); !set {
		p := g.Percent
		if p == 0 {
			p = config.DefaultGCPercent
		}
		debug.SetGCPercent(p)
	}
	if _, set := lookup("GOMEMLIMIT"); !set {
		n := g.MemoryLimit
		if n == 0 {
			n = config.DefaultGCMemoryLimit
		}
		debug.SetMemoryLimit(n)
	}
	// Start-up garbage (the decoded tool lists, the index build) would stay
	// resident until the next collection, which an idle gateway may not run
	// for a long time: once start-up has settled, collect and return it.
	releaseStartupGarbage(time.AfterFunc, heapAllocs, debug.FreeOSMemory)
}

const (
	// startupSettle is how long after serve starts the start-up garbage is
	// first returned to the OS, and how often it is looked at again.
	startupSettle = 2 * time.Second
	// startupWatch is how long after serve starts later start-up work is
	// looked for: a cold start whose upstream lists its tools after the
	// first release (a slow upstream, a busy machine) leaves its garbage
	// (the listing, the index build: 92–99 MB at rest instead of ~60 MB at
	// 10,000 tools, measured with bench/startup) resident too.
	startupWatch = 30 * time.Second
	// startupWork is how much allocated since the last release counts as
	// start-up work (a cold listing and index build of 10,000 tools
	// allocate far more); less is left to the collector's own pace.
	startupWork = 16 << 20
)

// releaseStartupGarbage returns the start-up garbage to the OS startupSettle
// after serve starts, and again at each later look (every startupSettle,
// until startupWatch) that finds at least startupWork allocated since it
// was last returned. after, allocs and free are time.AfterFunc, heapAllocs and
// debug.FreeOSMemory (tests give their own).
func releaseStartupGarbage(after func(time.Duration, func()) *time.Timer, allocs func() uint64, free func()) {
	var last uint64
	var look func(n int)
	look = func(n int) {
		if now := allocs(); n == 1 || now-last >= startupWork {
			free()
			last = allocs()
		}
		if time.Duration(n+1)*startupSettle <= startupWatch {
			after(startupSettle, func() { look(n + 1) })
		}
	}
	after(startupSettle, func() { look(1) })
}

// heapAllocs is the bytes allocated on the heap since the process started.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
