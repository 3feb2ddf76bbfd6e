package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/plugin"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/secrets"
)

// buildProvider constructs a configured provider with its kind's builder.
// Construction starts nothing: upstreams start lazily.
func buildProvider(pc config.Provider, deps provider.Deps) (provider.Provider, error) {
	if len(pc.Unresolved) > 0 {
		return nil, fmt.Errorf("environment variables not set: %s", strings.Join(pc.Unresolved, ", "))
	}
	// Its secret references (${keyring:…}, ${pass:…}, …) are resolved now:
	// one that does not resolve skips this provider with the store's words.
	r := deps.Secrets
	if r == nil {
		r = secrets.Default
	}
	pc, err := config.ResolveProvider(context.Background(), pc, r)
	if err != nil {
		return nil, err
	}
	if deps.Log != nil {
		deps.Log = deps.Log.With("provider", pc.ID)
	}
	return provider.Build(pc, deps)
}

// bind hands every provider that reports back on its own (an upstream whose
// tool or prompt list changes) its log and a refresh of this generation's
// catalog; the facade then tells clients list_changed. Providers wrapped
// with skills are bound too.
func (g *generation) bind() {
	onChange := func() {
		g.reg.Refresh(context.Background())
		if g.onPrompts != nil {
			g.onPrompts() // upstream prompts change without the tools changing
		}
	}
	for _, st := range g.reg.Providers() {
		if p, _, ok := g.reg.Provider(st.Info.ID); ok {
			if n, ok := provider.As[provider.Notifier](p); ok {
				n.Bind(g.log, onChange)
			}
		}
	}
}

// addPlugins adds the providers plugin directories declare (next to the
// config, in $AGENT_TOOLS_PLUGINS_DIR, in the project directory). A broken
// plugin, or one whose id the config already uses, is logged and skipped, and
// doctor lists it.
func (g *generation) addPlugins(o Options) {
	env := o.Env
	if env == nil {
		env = os.LookupEnv
	}
	project := o.ProjectDir
	if project == "" {
		project, _ = os.Getwd()
	}
	note := func(who, dir, status, reason string) {
		g.loadErrors = append(g.loadErrors, provider.Diagnostic{Provider: who, Item: dir, Status: status, Reason: reason})
	}
	plugins, errs := plugin.Discover(plugin.SearchDirs(g.cfg.Dir, project, env), env)
	for _, err := range errs {
		who, dir := "plugin", ""
		var pe *plugin.Error
		if errors.As(err, &pe) {
			who, dir, err = filepath.Base(pe.Dir), pe.Dir, pe.Err
		}
		g.log.Error("plugin skipped", "plugin", dir, "err", err)
		note(who, dir, "failed", "plugin skipped: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	for _, pl := range plugins {
		pc := pl.Provider
		for _, w := range pl.Warnings {
			g.log.Warn("plugin", "plugin", pl.Dir, "warning", w)
			note(pc.ID, pl.Dir, "skipped", w)
		}
		switch _, taken := g.cfg.Provider(pc.ID); {
		case taken:
			g.log.Error("plugin skipped: the config declares the same provider id", "plugin", pl.Dir, "provider", pc.ID)
			note(pc.ID, pl.Dir, "failed", fmt.Sprintf("plugin skipped: the config already declares provider %q", pc.ID))
			continue
		case !pc.Enabled:
			note(pc.ID, pl.Dir, "skipped", "plugin disabled (provider.enabled: false)")
		}
		p, err := buildProvider(pc, g.deps)
		if err != nil {
			g.log.Error("plugin skipped", "plugin", pl.Dir, "provider", pc.ID, "err", err)
			g.unbuilt(pc, pl.Dir, fmt.Errorf("plugin skipped: %w", err))
			continue
		}
		g.log.Info("plugin loaded", "plugin", pl.Dir, "provider", pc.ID, "kind", pc.Kind, "enabled", pc.Enabled)
		g.addAs(g.withSkills(p, pl.Dir, pl.Manifest.Skills, g.log), pc.Enabled)
	}
}
