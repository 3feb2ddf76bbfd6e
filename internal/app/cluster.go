package app

// What an operator changes on one replica reaches every replica
// (server.redis): a provider switched on or off, an upstream restarted, a
// pin approved. The replica that acts applies the change itself and
// writes it to the shared store (cluster.Changes); every other replica's
// watcher notices it — at once by Redis pub/sub, within
// cluster.DefaultChangesPoll by its poll otherwise — and applies it the
// same way, so its registry changes and its own sessions are told
// list_changed. Without Redis there is one replica and nothing to carry.

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/cluster"
)

// clusterWatch is the watcher of the cluster's changes (nil stop: none).
type clusterWatch struct {
	stop     context.CancelFunc
	restarts sync.WaitGroup // restarts asked for by other replicas, in flight
}

// restartTimeout bounds a restart another replica asked for (the console's
// own restart waits as long).
const restartTimeout = 45 * time.Second

// sharedChoices applies the cluster's run-time choices before the first
// generation is built: a replica that starts after an operator switched a
// provider off never starts it.
func (a *App) sharedChoices(ctx context.Context) {
	c := a.shared.Changes
	if c == nil {
		return
	}
	on, err := c.Enabled(ctx)
	if err != nil {
		a.log.Warn("cluster: cannot read the providers switched on or off on other replicas yet", "err", err)
		return
	}
	for id, v := range on {
		a.enabled.set(id, v)
	}
}

// watchCluster starts applying the changes made on other replicas.
func (a *App) watchCluster() {
	c := a.shared.Changes
	if c == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(a.ctx))
	a.cluster.stop = cancel
	c.Watch(ctx, func(ch cluster.Change) { a.applyChange(ctx, ch) })
}

// stopCluster ends the watcher and waits for the restarts it started.
func (a *App) stopCluster() {
	if a.cluster.stop != nil {
		a.cluster.stop()
	}
	a.cluster.restarts.Wait()
}

// applyChange makes this replica serve what the cluster's state says.
func (a *App) applyChange(ctx context.Context, ch cluster.Change) {
	g := a.current()
	now := map[string]bool{}
	for _, st := range g.reg.Providers() {
		now[st.Info.ID] = st.Enabled
	}
	for _, id := range slices.Sorted(maps.Keys(ch.Enabled)) {
		on := ch.Enabled[id]
		cur, registered := now[id]
		_, unbuilt := g.unavailable[id]
		if (!registered && !unbuilt) || (registered && cur == on) || (unbuilt && on) {
			continue // not served here, already so, or cannot be built here
		}
		if err := a.setEnabled(ctx, id, on); err != nil {
			a.log.Warn("cluster: a provider switched on or off on another replica", "provider", id, "enabled", on, "err", err)
			continue
		}
		a.log.Info("cluster: applied a toggle made on another replica", "provider", id, "enabled", on)
	}
	for _, id := range ch.Restart {
		a.cluster.restarts.Add(1)
		go func() { // a slow start must not hold the next change up
			defer a.cluster.restarts.Done()
			rctx, cancel := context.WithTimeout(ctx, restartTimeout)
			defer cancel()
			if err := a.restart(rctx, id); err != nil {
				a.log.Warn("cluster: restarting a provider restarted on another replica", "provider", id, "err", err)
				return
			}
			a.log.Info("cluster: restarted a provider restarted on another replica", "provider", id)
		}()
	}
	if !ch.First {
		if p := a.pins.store; p != nil {
			p.Sync(ctx) // a pin approved elsewhere: re-admitted and told now, not at the next second
		}
		if len(a.current().held) > 0 { // a registry entry approved elsewhere starts here too (held.go)
			a.cluster.restarts.Add(1)
			go func() {
				defer a.cluster.restarts.Done()
				a.recheckHeld(ctx)
			}()
		}
	}
}

// share runs f on the cluster's changes (with Redis); a failure is logged:
// the change holds on this replica, and the others learn of it only when
// the store answers again.
func (a *App) share(what, id string, f func(*cluster.Changes) error) {
	c := a.shared.Changes
	if c == nil {
		return
	}
	if err := f(c); err != nil {
		a.log.Warn("cluster: the other replicas were not told", "change", what, "provider", id, "err", err)
	}
}
