package app

import (
	"fmt"
	"log/slog"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/resultcache"
	"github.com/agent-tools/agent-tools/internal/state"
)

// resultCache builds the cache: section's result cache for a generation
// (docs/cache.md); nil when no rule is configured. With server.redis the
// results live in the shared store (a hit on any replica; the key holds
// the identity), sealed with the cluster key as grants are: a result is
// text the model reads, so one written into Redis by anyone without the
// key (an injected answer) is refused and logged, not served,
// else in memory under limits.cacheBytes. A change of the catalog drops
// the changed providers' results.
func resultCache(cfg *config.Config, reg *registry.Registry, shared state.Store, redis bool, log *slog.Logger) *resultcache.Cache {
	if len(cfg.Cache) == 0 {
		return nil
	}
	o := resultcache.Options{MaxBytes: cfg.Limits.CacheBytesOrDefault(), Log: log}
	for _, r := range cfg.Cache {
		o.Rules = append(o.Rules, resultcache.Rule{Tools: r.Tools, TTL: r.TTL.Duration, PerIdentity: r.IsPerIdentity()})
	}
	if redis {
		o.Store = shared
	}
	c := resultcache.New(o)
	reg.OnChange(func() {
		all := allTools(reg)
		c.Changed(all)
		c.Refused(all) // logs each tool a rule matches that is not read-only, once
	})
	return c
}

func allTools(reg *registry.Registry) []catalog.Tool {
	var all []catalog.Tool
	for _, st := range reg.Providers() {
		all = append(all, reg.Tools(st.Info.ID)...)
	}
	return all
}

// cacheStage is the pipeline stage of c (nil: none).
func cacheStage(c *resultcache.Cache) pipeline.Middleware {
	if c == nil {
		return nil
	}
	return c.Stage()
}

// cacheDiagnostics are doctor's lines for tools a cache rule matches that
// are not read-only: never cached.
func cacheDiagnostics(g *generation) []provider.Diagnostic {
	if g.cache == nil {
		return nil
	}
	var out []provider.Diagnostic
	for _, r := range g.cache.Refused(allTools(g.reg)) {
		out = append(out, provider.Diagnostic{Provider: r.Provider, Item: r.Tool, Status: "skipped",
			Reason: fmt.Sprintf("cache: %q matches this tool, which is not read-only: its results are never cached", r.Glob)})
	}
	return out
}
