package mcp

import (
	"fmt"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Build is kind mcp's entry in the runtime's table of provider kinds: it
// turns a validated config entry into a provider. It starts nothing
// (upstreams start on first need).
func Build(pc config.Provider, deps provider.Deps) (provider.Provider, error) {
	spec, ok := pc.Spec.(*config.MCP)
	if !ok {
		return nil, fmt.Errorf("provider %q: not an mcp entry", pc.ID)
	}
	o := OptionsFrom(pc, spec, deps)
	if spec.URL != "" && (spec.Auth != nil || storedLogin(pc.ID, spec.URL)) {
		h, err := AuthFrom(pc.ID, spec, nil, nil, "", false)
		if err != nil {
			return nil, err
		}
		o.OAuth = h
	}
	return New(o), nil
}

// OptionsFrom maps a config entry onto Options.
func OptionsFrom(pc config.Provider, spec *config.MCP, deps provider.Deps) Options {
	return Options{
		ID: pc.ID, Description: pc.Description, DiscoverHint: pc.DiscoverHint,
		RequireConfirm: pc.RequireConfirm, Timeout: pc.Timeout.Duration,
		BareNames: spec.Passthrough(),
		Command:   spec.Command, Args: spec.Args, Env: spec.Env, Dir: spec.Cwd,
		URL: spec.URL, Headers: spec.Headers,
		ReadOnly: pc.ReadOnly, TrustAnnotations: spec.TrustAnnotations,
		ClientVersion: deps.Version, CacheDir: deps.CacheDir,
	}
}
