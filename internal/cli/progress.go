package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// defaultProgressEvery is how often a running call shows life, as the
// facade's heartbeat does for MCP clients.
const defaultProgressEvery = 2 * time.Second

// progressLine shows a running call's progress on one terminal line of w:
// what the provider reports (a worker's events) and, between reports, how
// long the call has run. stop clears the line before the result is printed.
func progressLine(ctx context.Context, w io.Writer, tool string, every time.Duration) (context.Context, func()) {
	if every <= 0 {
		every = defaultProgressEvery
	}
	var (
		mu       sync.Mutex
		shown    bool
		lastReal time.Time
		ended    bool
	)
	show := func(msg string, real bool) {
		mu.Lock()
		defer mu.Unlock()
		if ended || (!real && time.Since(lastReal) < every) {
			return
		}
		if real {
			lastReal = time.Now()
		}
		// \r and erase-line rewrite one line; the message itself is escaped.
		fmt.Fprintf(w, "\r\x1b[K%s", oneLine(msg, 120))
		shown = true
	}
	pctx := provider.WithProgress(ctx, func(done, total float64, msg string) {
		if msg == "" {
			msg = fmt.Sprintf("%s: %g", tool, done)
			if total > 0 {
				msg += fmt.Sprintf("/%g", total)
			}
		}
		show(msg, true)
	})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				show(fmt.Sprintf("%s still running after %s", tool, time.Since(start).Round(time.Second)), false)
			}
		}
	})
	return pctx, func() {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		ended = true
		if shown {
			fmt.Fprint(w, "\r\x1b[K")
		}
	}
}
