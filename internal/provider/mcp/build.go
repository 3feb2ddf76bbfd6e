package mcp

import (
	"fmt"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// Build is kind mcp's entry in the runtime's table of provider kinds: it
// turns a validated config entry into a provider. It starts nothing
// (upstreams start on first need).
func Build(h provider.Header, s config.Spec, deps provider.Deps) (provider.Provider, error) {
	spec, ok := s.(*Spec)
	if !ok {
		return nil, fmt.Errorf("provider %q: not an mcp entry", h.ID)
	}
	o := OptionsFrom(h, spec, deps)
	if spec.URL == "" {
		return New(o), nil
	}
	store := deps.Logins
	if store == nil {
		fs, err := upstreamauth.NewFileStore("")
		if err != nil {
			return New(o), nil // no state directory: no logins either
		}
		store = fs
	}
	// Every HTTP upstream gets a handler (one without an auth block logs in
	// as a plain oauth client), except one that sends its own Authorization
	// header: its 401 is a wrong credential, not a login to make.
	if spec.Auth != nil || !hasAuthorizationHeader(spec.Headers) {
		a, err := AuthFrom(h.ID, spec, store, nil, "", false)
		if err != nil {
			return nil, err
		}
		o.OAuth = a
	}
	p := New(o)
	p.watchLogins(store) // also for an upstream without auth: its first login
	return p, nil
}

// OptionsFrom maps an entry's header and spec onto Options.
func OptionsFrom(h provider.Header, spec *Spec, deps provider.Deps) Options {
	return Options{
		Header:    h,
		BareNames: spec.Passthrough(),
		Command:   spec.Command, Args: spec.Args, Env: spec.Env, Dir: spec.Cwd,
		URL: spec.URL, Headers: spec.Headers,
		TrustAnnotations: spec.TrustAnnotations,
		ClientVersion:    deps.Version, CacheDir: deps.CacheDir,
	}
}
