package registry

import (
	"context"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// fresh reports whether a Refresh can be skipped: ctx does not ask for a
// rescan, and every enabled provider has been listed successfully and says
// (provider.Fresher) that its tools did not change since. This is the hot
// path of every tools/call: it takes only the registry's read lock, never
// refreshMu, and does no I/O.
func (r *Registry) fresh(ctx context.Context) bool {
	if provider.Rescan(ctx) {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.pinsMovedLocked() {
		return false
	}
	for _, id := range r.order {
		e := r.providers[id]
		if !e.enabled {
			continue
		}
		if !e.listed || e.loadErr != nil {
			return false
		}
		f, ok := e.p.(provider.Fresher)
		if !ok || !f.Fresh() {
			return false
		}
	}
	return true
}
