package registry

import (
	"slices"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// holdLocked pins e's named tools and takes the ones the pin store holds
// back (a changed definition under security.pin: quarantine) out of the
// catalog: they are in no listing, search or call until approved.
func (r *Registry) holdLocked(e *entry) {
	e.held = nil
	if r.opts.Pins == nil || len(e.tools) == 0 {
		return
	}
	held := r.opts.Pins.Observe(e.tools)
	if len(held) == 0 {
		return
	}
	e.tools = slices.DeleteFunc(e.tools, func(t catalog.Tool) bool {
		if held[t.Canonical] {
			delete(r.byName, t.Canonical)
			e.held = append(e.held, t.Canonical)
			return true
		}
		return false
	})
}

// repinLocked re-installs every listed provider's tools when a held tool
// was approved since the catalog was built (here or from another process),
// so that it joins the catalog again. Called with refreshMu held.
func (r *Registry) repinLocked() bool {
	if r.opts.Pins == nil {
		return false
	}
	gen := r.opts.Pins.Generation()
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen == r.pinGen {
		return false
	}
	r.pinGen = gen
	changed := false
	for _, id := range r.order {
		e := r.providers[id]
		if e.enabled && e.listed && len(e.held) > 0 {
			r.installLocked(e, e.raw, e.rawSk)
			changed = true
		}
	}
	return changed
}

// pinsMovedLocked reports whether an approval happened since the catalog
// was built (fresh's check; the store re-reads at most once a second).
func (r *Registry) pinsMovedLocked() bool {
	return r.opts.Pins != nil && r.opts.Pins.Generation() != r.pinGen
}

// Held reports whether canonical names a tool held back by its pin, and
// its provider.
func (r *Registry) Held(canonical string) (providerID string, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, id := range r.order {
		if e := r.providers[id]; e.enabled && slices.Contains(e.held, canonical) {
			return id, true
		}
	}
	return "", false
}

// Canonical is the canonical name a provider's tool of that name would
// have (for messages about tools that are not in the catalog).
func (r *Registry) Canonical(providerID, name string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.providers[providerID]
	if !ok {
		return name
	}
	c, err := r.canonicalLocked(e.info, name, r.opts.Rename[providerID])
	if err != nil {
		return name
	}
	return c
}
