package registry

import (
	"context"
	"slices"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/pins"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/scan"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// holdLocked pins e's named tools and takes the ones the pin store holds
// back out of the catalog: a changed definition or a new tool under
// security.pin: quarantine, one the scanner flags as r.opts.Scan.Holding
// says (a high finding by default, high or medium under quarantine),
// and, while the provider's list comes from a cache, every tool whose
// digest is not its pin's (served again once the live list is checked).
// They are in no listing, search or call until then.
func (r *Registry) holdLocked(e *entry) {
	e.held, e.heldWhy, e.cached = nil, nil, false
	if r.opts.Pins == nil || len(e.tools) == 0 {
		return
	}
	if ll, ok := provider.As[provider.LiveLister](e.p); ok && ll.FromCache() {
		e.cached = true
	}
	b := pins.Batch{Tools: e.tools, Cached: e.cached}
	if r.opts.Scan != scan.Off {
		// The other providers' names, for the shadowing rules, when a
		// definition is scanned at all (a warm start scans none).
		var names *scan.Names
		taken := false
		b.Scan = func(t catalog.Tool) []scan.Finding {
			if !taken {
				names, taken = r.otherNamesLocked(e.info.ID), true
			}
			return scan.Tool(t, names)
		}
	}
	b.ScanMode = r.opts.Scan
	held := r.opts.Pins.ObserveBatch(b)
	if len(held) == 0 {
		return
	}
	e.heldWhy = held
	e.tools = slices.DeleteFunc(e.tools, func(t catalog.Tool) bool {
		if _, ok := held[t.Canonical]; ok {
			delete(r.byName, t.Canonical)
			e.held = append(e.held, t.Canonical)
			return true
		}
		return false
	})
}

// otherNamesLocked are the tools of every enabled provider but id, for the
// scanner's shadowing rules (nil when there are none).
func (r *Registry) otherNamesLocked(id string) *scan.Names {
	var others []scan.Other
	for _, pid := range r.order {
		o := r.providers[pid]
		if pid == id || !o.enabled {
			continue
		}
		for _, t := range o.tools {
			others = append(others, scan.Other{Provider: pid, Name: t.Name, Canonical: t.Canonical})
		}
	}
	return scan.NewNames(others)
}

// unchecked reports whether e holds tools back only until its live list is
// checked (its list came from a cache).
func (e *entry) unchecked() bool {
	if !e.cached {
		return false
	}
	for _, why := range e.heldWhy {
		if why == pins.HeldUnchecked {
			return true
		}
	}
	return false
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
		if e.enabled && e.listed && (len(e.held) > 0 || r.opts.Scan != scan.Off) {
			r.installLocked(e, e.raw, e.rawSk)
			changed = true
		}
	}
	return changed
}

// pinsMovedLocked reports whether an approval happened since the catalog
// was built (fresh's check; the store re-reads at most once a second), or
// a provider whose tools came from a cache has heard from its backend.
func (r *Registry) pinsMovedLocked() bool {
	if r.opts.Pins == nil {
		return false
	}
	for _, id := range r.order {
		if e := r.providers[id]; e.cached && !fromCache(e.p) {
			return true
		}
	}
	return r.opts.Pins.Generation() != r.pinGen
}

func fromCache(p provider.Provider) bool {
	ll, ok := provider.As[provider.LiveLister](p)
	return ok && ll.FromCache()
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

// HeldError is the teaching error for a call to a held tool (nil when
// canonical is not held): why it is held, and how a person approves it.
func (r *Registry) HeldError(canonical string) *toolerr.Error {
	r.mu.RLock()
	var why string
	var info catalog.ProviderInfo
	for _, id := range r.order {
		if e := r.providers[id]; e.enabled && slices.Contains(e.held, canonical) {
			why, info = e.heldWhy[canonical], e.info
			break
		}
	}
	r.mu.RUnlock()
	if why == "" {
		return nil
	}
	return r.heldError(canonical, why, info)
}

// ScanMode is security.scan in force (scan.Default when it is not set).
func (r *Registry) ScanMode() scan.Mode { return r.opts.Scan }

func (r *Registry) heldError(name, why string, info catalog.ProviderInfo) *toolerr.Error {
	hint := "A person must approve the new definition first: in the console's pins view, or with `agent-tools pins approve " + name + "`. Tell the user; do not retry."
	var msg string
	switch why {
	case pins.HeldUnchecked:
		return toolerr.New(toolerr.ProviderUnavailable,
			"Retry once the upstream is running; if it keeps failing, tell the user (agent-tools doctor shows why).",
			"tool %q is held until its upstream's live definition has been checked against its pin, and the upstream has not answered yet", name)
	case pins.HeldNew:
		msg = "it is new beside its provider's pinned tools and has not been approved"
	case pins.HeldSuspicious:
		// The findings are named (severity, rule, field), not quoted: the
		// matched text is the poisoned text the hold keeps from the model.
		msg = "the definition scanner flagged its definition"
		if fs := r.opts.Pins.HeldFindings(name, r.opts.Scan); len(fs) > 0 {
			msg += ": " + scan.Brief(fs)
		}
		msg += " (" + r.opts.Scan.Setting() + ")"
		hint = "A person must look at its definition and approve it first: with `agent-tools pins approve " + name + "`, or in the console's pins view (agent-tools doctor shows the finding). Tell the user; do not retry."
	default:
		msg = "its upstream changed its definition since it was pinned"
		if info.ID == naming.ProviderLocal {
			msg = "the repository script's definition changed since it was pinned"
		}
	}
	return toolerr.New(toolerr.Denied, hint, "tool %q is quarantined: %s", name, msg)
}

// checkCall is the pin check a provider runs right before it forwards a
// call (provider.CallCheck): the definition the serving session lists
// now must be the one that was checked against the pins. When live is the
// list the catalog was built from, that is a lookup; otherwise (a warm
// start's cached list, a passthrough client's own upstream session) the
// tool's live definition is pinned and checked here, before the call.
func (r *Registry) checkCall(_ context.Context, tool catalog.Tool, live []catalog.Tool) error {
	if r.opts.Pins == nil {
		return nil
	}
	r.mu.RLock()
	e := r.providers[tool.Provider]
	if e == nil {
		r.mu.RUnlock()
		return nil
	}
	info := e.info
	if len(live) > 0 && len(e.raw) == len(live) && &e.raw[0] == &live[0] {
		i, found := slices.BinarySearchFunc(e.tools, tool.Name, func(t catalog.Tool, n string) int { return strings.Compare(t.Name, n) })
		if found && e.tools[i].Digest == tool.Digest {
			r.mu.RUnlock()
			return nil
		}
	}
	r.mu.RUnlock()

	i := slices.IndexFunc(live, func(t catalog.Tool) bool { return t.Name == tool.Name })
	if i < 0 {
		return toolerr.New(toolerr.UnknownTool, "Search for the tool again: the upstream's list changed.",
			"tool %q is no longer offered by its upstream", tool.Canonical)
	}
	lt := live[i]
	lt.Provider = tool.Provider
	if ov, ok := r.opts.Overrides[tool.Provider][lt.Name]; ok {
		lt = ov.Apply(lt)
	}
	lt.Canonical = tool.Canonical
	lt.Digest = lt.Def().Digest()
	if lt.Digest == tool.Digest {
		return nil // what was resolved, and so checked when it was installed
	}
	b := pins.Batch{Tools: []catalog.Tool{lt}}
	if r.opts.Scan != scan.Off {
		r.mu.RLock()
		names := r.otherNamesLocked(tool.Provider)
		r.mu.RUnlock()
		b.Scan = func(t catalog.Tool) []scan.Finding { return scan.Tool(t, names) }
	}
	b.ScanMode = r.opts.Scan
	if why, held := r.opts.Pins.ObserveBatch(b)[lt.Canonical]; held {
		return r.heldError(lt.Canonical, why, info)
	}
	return nil
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
