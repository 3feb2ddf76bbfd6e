package app

// The enabled set: which providers serve tools right now.
//
// Every provider the config (or a plugin manifest, or an embedder) declares
// is built, including those declared disabled, so that SetEnabled can turn
// them on later; only one that cannot be built (unresolved ${VAR}s, a bad
// spec) is left out, and it says why. The app owns the run-time choices
// (enabledSet.over): every build of a generation applies them, so a reload
// keeps what SetEnabled decided. Within a generation the registry's enabled
// flag is the one source of truth; the pipeline's gate (gatedCatalog) reads
// it again just before a backend runs, so a call racing a disable either
// runs whole or gets PROVIDER_UNAVAILABLE, never half.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// UnavailableError is returned by SetEnabled for a declared provider that
// could not be built (so it cannot be enabled); Reason says why.
type UnavailableError struct {
	ID     string
	Reason string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("provider %q cannot be enabled: %s", e.ID, e.Reason)
}

// Is makes errors.Is(err, status.ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == status.ErrUnavailable }

type enabledSet struct {
	mu        sync.Mutex
	over      map[string]bool // run-time choices; they outlive generations
	listeners []func()        // told after the visible catalog changed
}

func (s *enabledSet) init(disabled []string) {
	s.over = map[string]bool{}
	for _, id := range disabled {
		s.over[id] = false
	}
}

func (s *enabledSet) snapshot() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.over))
	for k, v := range s.over {
		out[k] = v
	}
	return out
}

func (s *enabledSet) set(id string, on bool) {
	s.mu.Lock()
	s.over[id] = on
	s.mu.Unlock()
}

func (s *enabledSet) notify() {
	s.mu.Lock()
	ls := slices.Clone(s.listeners)
	s.mu.Unlock()
	for _, f := range ls {
		f()
	}
}

// OnChange registers f to run after the visible catalog changed (a toggle,
// a reload, a provider's own list_changed). The facade re-syncs on its own;
// this is for in-process sessions. f must not block.
func (a *App) OnChange(f func()) {
	a.enabled.mu.Lock()
	a.enabled.listeners = append(a.enabled.listeners, f)
	a.enabled.mu.Unlock()
}

// changed is every generation's registry change listener.
func (a *App) changed() {
	if f := a.fac.Load(); f != nil {
		f.Sync() // the MCP server tells every session list_changed
	}
	a.syncProfiles()
	a.enabled.notify()
}

// addAs registers a built provider that starts enabled or not.
func (g *generation) addAs(p provider.Provider, enabled bool) {
	if !enabled {
		g.startOff[p.Info().ID] = true
	}
	g.add(p)
}

// unbuilt records a declared provider that could not be built. For an
// enabled one that is a failure (doctor exits 1); for a disabled one it only
// means it cannot be enabled, and why.
func (g *generation) unbuilt(pc config.Provider, item string, err error) {
	g.unavailable[pc.ID] = err.Error()
	if pc.Enabled {
		g.unbuiltOn[pc.ID] = true
		g.failed(pc.ID, item, err)
		return
	}
	g.loadErrors = append(g.loadErrors, provider.Diagnostic{Provider: pc.ID, Item: item, Status: "skipped",
		Reason: "disabled, and cannot be enabled: " + err.Error()})
}

// applyEnabled disables, before anything starts, the providers that start
// disabled: declared so, unless a run-time choice says otherwise.
func (g *generation) applyEnabled(ctx context.Context, over map[string]bool) {
	for _, st := range g.reg.Providers() {
		id := st.Info.ID
		on := !g.startOff[id]
		if v, ok := over[id]; ok {
			on = v
		}
		if !on {
			_ = g.reg.SetEnabled(ctx, id, false) // registered just above: cannot be unknown
		}
	}
}

// startOne runs a provider's start phase once per generation.
func (g *generation) startOne(ctx context.Context, id string, p provider.Provider) {
	g.startedMu.Lock()
	done := g.started[id]
	g.started[id] = true
	g.startedMu.Unlock()
	if done {
		return
	}
	if s, ok := p.(provider.Starter); ok {
		if err := s.Start(ctx); err != nil {
			// At debug: its tools fail the same way, which the catalog
			// reports once per process (a warning naming doctor), and
			// doctor has the details; a broken provider must not repeat
			// itself on every command.
			g.log.Debug("provider failed to start", "provider", id, "err", err)
		}
	}
}

// SetEnabled turns a provider on or off at run time. tools/list, discover
// and search change at once and every session (stdio, HTTP, in-process)
// is told list_changed. The choice survives config reloads. Calls already
// running on the provider finish; later ones get PROVIDER_UNAVAILABLE.
// With server.redis the choice is the cluster's: every replica applies it
// and tells its own sessions (cluster.go).
func (a *App) SetEnabled(ctx context.Context, id string, on bool) error {
	if err := a.setEnabled(ctx, id, on); err != nil {
		return err
	}
	a.share("toggle", id, func(c *cluster.Changes) error { return c.SetEnabled(ctx, id, on) })
	return nil
}

// setEnabled is SetEnabled on this replica only.
func (a *App) setEnabled(ctx context.Context, id string, on bool) error {
	a.reload.mu.Lock() // one toggle or reload at a time: a build sees every choice
	defer a.reload.mu.Unlock()
	g := a.current()
	if reason, ok := g.unavailable[id]; ok {
		if on {
			return &UnavailableError{ID: id, Reason: reason}
		}
		a.enabled.set(id, false)
		return nil
	}
	if !slices.ContainsFunc(g.reg.Providers(), func(st registry.ProviderStatus) bool { return st.Info.ID == id }) {
		return fmt.Errorf("%w %q", status.ErrUnknownProvider, id)
	}
	a.enabled.set(id, on)
	if on {
		// Start before the registry lists it: Refresh (in SetEnabled) loads its tools.
		if p, ok := g.all[id]; ok {
			g.startOne(a.ctx, id, p)
		}
	}
	if !on {
		g.off.hide(id, g.reg.Tools(id))
	}
	if err := g.reg.SetEnabled(ctx, id, on); err != nil {
		return err
	}
	if on {
		g.off.show(id)
	}
	a.log.Info("provider toggled", "provider", id, "enabled", on)
	return nil
}

// gatedCatalog is the pipeline's view of a generation's registry: the
// backend it resolves re-checks, as the call starts, that its provider is
// still enabled; and a tool of a provider disabled at run time resolves to
// its provider, so the call gets PROVIDER_UNAVAILABLE rather than
// UNKNOWN_TOOL (the agent learns the tool exists but is switched off).
type gatedCatalog struct {
	*registry.Registry
	off *offTools
}

func (c gatedCatalog) Lookup(name string) (catalog.Tool, bool) {
	if t, ok := c.Registry.Lookup(name); ok {
		return t, true
	}
	return c.off.lookup(name)
}

// offTools are the tools of providers disabled at run time, by canonical name.
type offTools struct {
	mu    sync.RWMutex
	tools map[string]catalog.Tool
}

func (o *offTools) hide(id string, tools []catalog.Tool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tools == nil {
		o.tools = map[string]catalog.Tool{}
	}
	for _, t := range tools {
		o.tools[t.Canonical] = t
	}
}

func (o *offTools) show(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, t := range o.tools {
		if t.Provider == id {
			delete(o.tools, n)
		}
	}
}

// inherit keeps the previous generation's switched-off tools whose
// provider is registered but disabled in this one.
func (o *offTools) inherit(prev *offTools, reg *registry.Registry) {
	off := map[string]bool{}
	for _, st := range reg.Providers() {
		off[st.Info.ID] = !st.Enabled
	}
	prev.mu.RLock()
	defer prev.mu.RUnlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	for n, t := range prev.tools {
		if off[t.Provider] {
			if o.tools == nil {
				o.tools = map[string]catalog.Tool{}
			}
			o.tools[n] = t
		}
	}
}

func (o *offTools) lookup(name string) (catalog.Tool, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	t, ok := o.tools[name]
	return t, ok
}

// WhyOff says that t's provider is disabled, when it is: the reason a tool
// that resolved has no provider to run it (pipeline.Resolve asks).
func (c gatedCatalog) WhyOff(t catalog.Tool) *toolerr.Error {
	for _, st := range c.Registry.Providers() {
		if st.Info.ID == t.Provider && !st.Enabled {
			return toolerr.New(toolerr.ProviderUnavailable,
				"It is switched off; tell the user, who can enable it again (the console, or the embedding program). Call agent_tools_help for what is loaded now.",
				"provider %q is disabled; %q did not run", t.Provider, t.Canonical)
		}
	}
	return nil
}

func (c gatedCatalog) Provider(id string) (provider.Provider, catalog.ProviderInfo, bool) {
	p, info, ok := c.Registry.Provider(id)
	if !ok {
		return nil, info, false
	}
	return gated{Provider: p, reg: c.Registry}, info, true
}

// gated is a resolved backend that refuses to start once its provider is
// disabled. It is used only for the one call, never registered, so the
// registry's type assertions on providers are unaffected.
type gated struct {
	provider.Provider
	reg *registry.Registry
}

func (g gated) Unwrap() provider.Provider { return g.Provider }

func (g gated) Call(ctx context.Context, t catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	return g.CallValues(ctx, t, args, provider.Values{})
}

// CallValues passes the call's values on to the provider once it is known
// to be enabled.
func (g gated) CallValues(ctx context.Context, t catalog.Tool, args json.RawMessage, v provider.Values) (*provider.Result, error) {
	if _, _, ok := g.reg.Provider(t.Provider); !ok {
		return nil, toolerr.New(toolerr.ProviderUnavailable,
			"The provider was disabled while this call was on its way; it did not run. Tell the user, or call agent_tools_help for what is loaded now.",
			"provider %q was disabled; %q did not run", t.Provider, t.Canonical)
	}
	return provider.CallWith(ctx, g.Provider, t, args, v)
}

var (
	_ provider.Unwrapper    = gated{}
	_ provider.ValuesCaller = gated{}
)
