package cli

import (
	"runtime/debug"
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
	time.AfterFunc(startupSettle, debug.FreeOSMemory)
}

// startupSettle is how long after serve starts the start-up garbage is
// returned to the OS (see applyGC).
const startupSettle = 2 * time.Second
