package app

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
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

// Provider states (ProviderState.State).
const (
	// StateReady: enabled, and its tools are listed (from a live upstream,
	// or from the cache of one that starts on its first call).
	StateReady = "ready"
	// StateStarting: enabled, and its first start (or a restart) is still
	// in flight: a slow upstream, not a broken one.
	StateStarting = "starting"
	// StateFailed: enabled but not working; Reason says why.
	StateFailed = "failed"
	// StateNeedsLogin: an HTTP upstream waits for a person's login; Reason
	// names the command (agent-tools auth login <id>).
	StateNeedsLogin = "needs_login"
	// StateDisabled: switched off (by the config or at run time), or not
	// wanted and unbuildable.
	StateDisabled = "disabled"
)

// ProviderState is one provider's line of Status.
type ProviderState struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Enabled bool   `json:"enabled"`
	Tools   int    `json:"tools"`
	Skills  int    `json:"skills"`
	// Error is the last tool listing's error (kept for scripts that read it;
	// State and Reason are the summary).
	Error string `json:"error,omitempty"`
	// Unavailable says why a declared provider could not be built (and so
	// cannot be enabled); it is then listed disabled, with no tools.
	Unavailable string `json:"unavailable,omitempty"`
	// State is ready, starting, failed or disabled (the State* constants);
	// Reason says why it failed (or why a disabled one cannot be enabled).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// LastError is the most recent failure, kept after a recovery, and
	// LastErrorAt when it happened (when the provider knows).
	LastError   string     `json:"lastError,omitempty"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	// Restarts counts restarts, the operator's and the automatic ones (an
	// upstream recycled after a crash or a hung call); Restartable says
	// App.Restart can restart it.
	Restarts    int  `json:"restarts"`
	Restartable bool `json:"restartable"`
}

// Status reports the live generation.
func (a *App) Status() Status {
	g := a.current()
	st := Status{Version: Version(), Mode: string(a.Mode), Config: g.cfg.Path, ProjectDir: g.cfg.Dir}
	seen := map[string]bool{}
	for _, ps := range g.reg.Providers() {
		seen[ps.Info.ID] = true
		st.Providers = append(st.Providers, providerState(ps, g.all[ps.Info.ID]))
	}
	over := a.enabled.snapshot()
	unbuilt := func(id, kind string) ProviderState {
		ps := ProviderState{ID: id, Kind: kind, Unavailable: redact.String(g.unavailable[id]), State: StateDisabled}
		ps.Reason = ps.Unavailable
		if on, chosen := over[id]; g.unbuiltOn[id] && (!chosen || on) {
			ps.State = StateFailed // wanted on, cannot be built: doctor fails too
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
func providerState(ps registry.ProviderStatus, p provider.Provider) ProviderState {
	out := ProviderState{ID: ps.Info.ID, Kind: ps.Info.Kind, Enabled: ps.Enabled, Tools: ps.Tools, Skills: len(ps.Skills)}
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
		out.State = StateDisabled
	case lc.Starting:
		out.State = StateStarting
	case lc.Failed && lc.NeedsLogin:
		out.State, out.Reason = StateNeedsLogin, out.LastError
	case lc.Failed:
		out.State, out.Reason = StateFailed, out.LastError
	case ps.Err != nil && !starting:
		out.State, out.Reason = StateFailed, out.Error
	case !ps.Listed:
		// Never listed since it was enabled, and no error: its start has
		// not completed (it says ErrStarting, or nothing yet).
		out.State = StateStarting
	default:
		out.State = StateReady
	}
	return out
}
