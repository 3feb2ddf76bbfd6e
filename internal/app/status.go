package app

import (
	"maps"
	"slices"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
)

// Status is the runtime's state as runtime_status, doctor and a console
// show it: one value built from the live generation.
type Status struct {
	Version    string          `json:"version"`
	Mode       string          `json:"mode"`
	Config     string          `json:"config"`
	ProjectDir string          `json:"projectDir"`
	Providers  []ProviderState `json:"providers"`
	// Problems are the doctor lines that are not "ok".
	Problems []provider.Diagnostic `json:"problems"`
}

// ProviderState is one provider's line of Status.
type ProviderState struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Enabled bool   `json:"enabled"`
	Tools   int    `json:"tools"`
	Skills  int    `json:"skills"`
	Error   string `json:"error,omitempty"`
	// Unavailable says why a declared provider could not be built (and so
	// cannot be enabled); it is then listed disabled, with no tools.
	Unavailable string `json:"unavailable,omitempty"`
}

// Status reports the live generation.
func (a *App) Status() Status {
	g := a.current()
	st := Status{Version: Version(), Mode: string(a.Mode), Config: g.cfg.Path, ProjectDir: g.cfg.Dir}
	seen := map[string]bool{}
	for _, ps := range g.reg.Providers() {
		seen[ps.Info.ID] = true
		st.Providers = append(st.Providers, providerState(ps))
	}
	for _, pc := range g.cfg.Providers {
		if reason, ok := g.unavailable[pc.ID]; ok && !seen[pc.ID] {
			seen[pc.ID] = true
			st.Providers = append(st.Providers, ProviderState{ID: pc.ID, Kind: pc.Kind, Unavailable: reason})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(g.unavailable)) { // plugins: not in the config's list
		if !seen[id] {
			st.Providers = append(st.Providers, ProviderState{ID: id, Unavailable: g.unavailable[id]})
		}
	}
	for _, d := range a.Diagnostics() {
		if d.Status != "ok" {
			st.Problems = append(st.Problems, d)
		}
	}
	return st
}

func providerState(ps registry.ProviderStatus) ProviderState {
	p := ProviderState{ID: ps.Info.ID, Kind: ps.Info.Kind, Enabled: ps.Enabled, Tools: ps.Tools, Skills: len(ps.Skills)}
	if ps.Err != nil {
		p.Error = ps.Err.Error()
	}
	return p
}
