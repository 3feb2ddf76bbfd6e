package registry

import (
	"context"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// fresh reports whether a Refresh can be skipped: ctx does not ask for a
// rescan, and every enabled provider is fresh (entryFresh). This is the hot
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
		if e := r.providers[id]; e.enabled && !entryFresh(e) {
			return false
		}
	}
	return true
}

// entryFresh reports whether a provider need not be listed again: it has
// been listed successfully and says (provider.Fresher) that its tools and
// skills did not change since. A Refresh lists only the providers that are
// not fresh (unless ctx asks for a rescan), so a provider that reports its
// changes is listed exactly when it reports one, whatever the others do.
// Call with r.mu held.
func entryFresh(e *entry) bool {
	if !e.listed || e.loadErr != nil || e.cached && !fromCache(e.p) {
		return false // a list served from the cache is fresh only once the live one replaced it (pins)
	}
	f, ok := e.p.(provider.Fresher)
	return ok && f.Fresh()
}
