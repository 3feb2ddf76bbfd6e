package app

import (
	"errors"
	"maps"
	"slices"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/status"
)

// Status reports the live generation.
func (a *App) Status() status.Status {
	g := a.current()
	st := status.Status{Version: Version(), Mode: string(a.Mode), Config: g.cfg.Path, ProjectDir: g.cfg.Dir}
	seen := map[string]bool{}
	for _, ps := range g.reg.Providers() {
		seen[ps.Info.ID] = true
		st.Providers = append(st.Providers, providerState(ps, g.all[ps.Info.ID]))
	}
	over := a.enabled.snapshot()
	unbuilt := func(id, kind string) status.ProviderState {
		ps := status.ProviderState{ID: id, Kind: kind, Unavailable: redact.String(g.unavailable[id]), State: status.StateDisabled}
		ps.Reason = ps.Unavailable
		if on, chosen := over[id]; g.unbuiltOn[id] && (!chosen || on) {
			ps.State = status.StateFailed // wanted on, cannot be built: doctor fails too
		}
		return ps
	}
	for _, pc := range g.cfg.Providers {
		if _, ok := g.unavailable[pc.ID]; ok && !seen[pc.ID] {
			seen[pc.ID] = true
			st.Providers = append(st.Providers, unbuilt(pc.ID, pc.Kind))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(g.unavailable)) { // plugins: not in the config's list
		if !seen[id] {
			st.Providers = append(st.Providers, unbuilt(id, ""))
		}
	}
	st.Embeddings = semanticStatus(g.reg)
	for _, d := range a.Diagnostics() {
		if d.Status != "ok" {
			st.Problems = append(st.Problems, d)
		}
	}
	return st
}

// providerState is a registered provider's line: the registry's account
// (enabled, listed, the listing's error) and, for a provider with a life of
// its own, the provider's (starting, failed, last error, restarts). Every
// message goes through the redactor: the console shows them.
func providerState(ps registry.ProviderStatus, p provider.Provider) status.ProviderState {
	out := status.ProviderState{ID: ps.Info.ID, Kind: ps.Info.Kind, Enabled: ps.Enabled, Tools: ps.Tools, Skills: len(ps.Skills)}
	starting := ps.Err != nil && errors.Is(ps.Err, provider.ErrStarting)
	if ps.Err != nil {
		out.Error = redact.String(ps.Err.Error())
		if !starting { // a slow start is no error
			out.LastError = out.Error
		}
	}
	var lc provider.LifecycleState
	if p != nil {
		if l, ok := provider.As[provider.Lifecycle](p); ok {
			lc = l.Lifecycle()
		}
		if c, ok := provider.As[provider.RestartCounter](p); ok {
			out.Restarts = c.Restarts()
		}
		_, out.Restartable = provider.As[provider.Restarter](p)
	}
	if lc.LastError != "" {
		out.LastError = redact.String(lc.LastError)
		if !lc.LastErrorAt.IsZero() {
			at := lc.LastErrorAt.UTC()
			out.LastErrorAt = &at
		}
	}
	switch {
	case !ps.Enabled:
		out.State = status.StateDisabled
	case lc.Starting:
		out.State = status.StateStarting
	case lc.Failed && lc.NeedsLogin:
		out.State, out.Reason = status.StateNeedsLogin, out.LastError
	case lc.Failed:
		out.State, out.Reason = status.StateFailed, out.LastError
	case ps.Err != nil && !starting:
		out.State, out.Reason = status.StateFailed, out.Error
	case !ps.Listed:
		// Never listed since it was enabled, and no error: its start has
		// not completed (it says ErrStarting, or nothing yet).
		out.State = status.StateStarting
	default:
		out.State = status.StateReady
	}
	return out
}
