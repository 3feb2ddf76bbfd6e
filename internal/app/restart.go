package app

import (
	"context"
	"fmt"

	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/status"
)

// Restart restarts one provider of the live generation on an operator's
// request (provider.Restarter: an upstream's process or session is ended
// and a fresh one started) and waits, under ctx, for the new start. The
// catalog is then refreshed: when the tools changed, every session (stdio,
// HTTP, in-process) is told list_changed, as after SetEnabled. It does not
// hold the toggle lock: a slow start must not block toggles and reloads;
// a reload racing it closes the provider, and Restart then fails.
//
// With server.redis the restart is the cluster's: every other replica
// restarts its own upstream of the provider too (each has its own process
// or session), without waiting for it here, and tells its own sessions
// when the tools changed (cluster.go).
func (a *App) Restart(ctx context.Context, id string) error {
	return a.restartAs(ctx, id, true)
}

// restart is Restart on this replica only (one another replica asked for).
func (a *App) restart(ctx context.Context, id string) error {
	return a.restartAs(ctx, id, false)
}

func (a *App) restartAs(ctx context.Context, id string, share bool) error {
	g := a.current()
	p, ok := g.all[id]
	if !ok {
		if reason, ok := g.unavailable[id]; ok {
			return fmt.Errorf("%w: %q could not be built: %s", status.ErrNotRestartable, id, reason)
		}
		return fmt.Errorf("%w %q", status.ErrUnknownProvider, id)
	}
	if _, _, on := g.reg.Provider(id); !on {
		return fmt.Errorf("%w: %q (enable it to start it)", status.ErrDisabled, id)
	}
	r, ok := provider.As[provider.Restarter](p)
	if !ok {
		return fmt.Errorf("%w: %q has no process or session of its own", status.ErrNotRestartable, id)
	}
	if share { // the others start theirs while this one does
		a.share("restart", id, func(c *cluster.Changes) error { return c.Restarted(ctx, id) })
	}
	a.log.Info("restarting provider", "provider", id)
	err := r.Restart(ctx)
	// The provider tells the registry itself when its tools changed (its
	// OnChange); this refresh makes the catalog current before returning.
	g.reg.Refresh(context.WithoutCancel(ctx))
	if err != nil {
		a.log.Warn("provider restart failed", "provider", id, "err", err)
		return err
	}
	return nil
}
