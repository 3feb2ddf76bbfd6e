package app

import (
	"context"
	"sort"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// How far a tool's definition, as the catalog lists it, is known to be its
// backend's own and the one a person approved (docs/pins.md). An upstream
// MCP server that ran before is listed from its cache until its first call
// (a warm start): until then nobody has asked it whether its tools changed,
// and `agent-tools list`, doctor and the console say so rather than show
// the cached definitions as current.
const (
	// DefinitionOK: listed by its backend since this process started (or
	// fixed by the config, as cli tools and scripts are), and the pinned one.
	DefinitionOK = "ok"
	// DefinitionCached: read from the cache of an earlier run; the upstream
	// has not been asked since start (RefreshLive asks it).
	DefinitionCached = "cached"
	// DefinitionChanged: the backend's definition differs from the one
	// approved (security.pin: warn serves it); `agent-tools pins approve`.
	DefinitionChanged = "changed"
	// DefinitionNew: a tool that appeared beside pinned ones, not approved.
	DefinitionNew = "new"
	// DefinitionFlagged: the definition scanner flagged it, not approved.
	DefinitionFlagged = "flagged"
	// DefinitionHeld: held back until a person approves it, or until its
	// upstream's live list is checked: in no listing, search or call.
	DefinitionHeld = "held"
)

// Definition is one tool's DefinitionState.
type Definition struct {
	Tool     string `json:"tool"`
	Provider string `json:"provider"`
	State    string `json:"state"`
	// Reason says why, for a state other than ok (a held tool's error).
	Reason string `json:"reason,omitempty"`
}

// Definitions says, per canonical name, how far each listed tool's
// definition is checked (DefinitionOK, Cached, Changed, New, Flagged), and
// names the tools held back (DefinitionHeld), which the catalog does not
// list.
func (a *App) Definitions() map[string]Definition {
	reg := a.Registry()
	cached := map[string]bool{}
	for _, p := range reg.Providers() {
		if p.Enabled {
			cached[p.Info.ID] = a.fromCache(p.Info.ID)
		}
	}
	out := map[string]Definition{}
	for _, t := range reg.Tools("") {
		d := Definition{Tool: t.Canonical, Provider: t.Provider, State: DefinitionOK}
		if cached[t.Provider] {
			d.State, d.Reason = DefinitionCached, "listed from the cache of an earlier run: its upstream has not been asked since start"
		}
		out[t.Canonical] = d
	}
	if s := a.Pins(); s != nil {
		for _, r := range s.List() {
			if prov, held := reg.Held(r.Tool); held {
				d := Definition{Tool: r.Tool, Provider: prov, State: DefinitionHeld}
				if e := reg.HeldError(r.Tool); e != nil {
					d.Reason = e.Message
				}
				out[r.Tool] = d
				continue
			}
			d, listed := out[r.Tool]
			if !listed {
				continue
			}
			switch r.Status() {
			case "changed":
				d.State, d.Reason = DefinitionChanged, "differs from the approved definition (agent-tools pins approve "+r.Tool+")"
			case "new":
				d.State, d.Reason = DefinitionNew, "appeared beside pinned tools, not approved (agent-tools pins approve "+r.Tool+")"
			case "suspicious":
				d.State, d.Reason = DefinitionFlagged, "flagged by the definition scanner, not approved (agent-tools pins approve "+r.Tool+")"
			}
			out[r.Tool] = d
		}
	}
	return out
}

// fromCache reports whether provider id's tools are still its cache's.
func (a *App) fromCache(id string) bool {
	p, _, ok := a.Registry().Provider(id)
	if !ok {
		return false
	}
	ll, ok := provider.As[provider.LiveLister](p)
	return ok && ll.FromCache()
}

// Cached names the enabled providers whose tools are still listed from
// the cache of an earlier run, sorted.
func (a *App) Cached() []string {
	var out []string
	for _, p := range a.Registry().Providers() {
		if p.Enabled && a.fromCache(p.Info.ID) {
			out = append(out, p.Info.ID)
		}
	}
	sort.Strings(out)
	return out
}

// RefreshLive asks every enabled provider whose tools are still listed
// from a cache for its live list (starting its upstream, under ctx), then
// refreshes the catalog, so that what it lists, and what the pins compare,
// is what the upstreams say now. It returns the providers that could not
// be asked, with why.
func (a *App) RefreshLive(ctx context.Context) map[string]error {
	failed := map[string]error{}
	reg := a.Registry()
	for _, id := range a.Cached() {
		p, _, ok := reg.Provider(id)
		if !ok {
			continue
		}
		ll, ok := provider.As[provider.LiveLister](p)
		if !ok {
			continue
		}
		if _, err := ll.ToolsLive(ctx); err != nil {
			failed[id] = err
		}
	}
	reg.Refresh(ctx)
	return failed
}
