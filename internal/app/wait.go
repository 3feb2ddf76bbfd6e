package app

import (
	"context"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/status"
)

// DefaultStartWait is how long the CLI's one-shot commands (doctor, list,
// search, call) wait for a provider that is still starting: an upstream's
// start-up timeout (an npx download, a JVM).
const DefaultStartWait = mcp.DefaultStartTimeout

// startWaitTick is how often WaitStarted looks again and reports progress
// when no provider said it changed.
const startWaitTick = 500 * time.Millisecond

// Starting lists the enabled providers whose start is still in flight.
func (a *App) Starting() []string {
	var ids []string
	for _, p := range a.Status().Providers {
		if p.Enabled && p.State == status.StateStarting {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// WaitStarted waits until no enabled provider is still starting, for at
// most max (0: DefaultStartWait) or until ctx ends, calling progress with
// the providers it still waits for and how long it has waited (at least
// every half second). It returns the providers that never became ready.
// A provider that reports a change (its tools arrived) is looked at at
// once; the tick catches starts that end in a failure.
func (a *App) WaitStarted(ctx context.Context, max time.Duration, progress func(starting []string, waited time.Duration)) []string {
	if max <= 0 {
		max = DefaultStartWait
	}
	start := time.Now()
	changed := make(chan struct{}, 1)
	a.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	t := time.NewTicker(startWaitTick)
	defer t.Stop()
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	for {
		a.Registry().Refresh(ctx) // a start that ended: its tools, or its failure
		ids := a.Starting()
		if len(ids) == 0 {
			return nil
		}
		if progress != nil {
			progress(ids, time.Since(start))
		}
		select {
		case <-changed:
		case <-t.C:
		case <-deadline.C:
			a.Registry().Refresh(ctx)
			return a.Starting()
		case <-ctx.Done():
			return a.Starting()
		}
	}
}
