package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/plugin"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
)

// buildProvider constructs a configured provider of the kinds this build has.
// Construction starts nothing: upstreams start lazily.
func buildProvider(pc config.Provider) (provider.Provider, error) {
	if len(pc.Unresolved) > 0 {
		return nil, fmt.Errorf("environment variables not set: %s", strings.Join(pc.Unresolved, ", "))
	}
	switch pc.Kind {
	case mcp.Kind:
		return mcp.New(mcpOptions(pc)), nil
	}
	return nil, fmt.Errorf("provider kind %q is not available in this build yet", pc.Kind)
}

func mcpOptions(pc config.Provider) mcp.Options {
	return mcp.Options{
		ID: pc.ID, Description: pc.Description, DiscoverHint: pc.DiscoverHint,
		RequireConfirm: pc.RequireConfirm, Timeout: pc.Timeout.Duration,
		BareNames: pc.Prefix != nil && *pc.Prefix == "",
		Command:   pc.Command, Args: pc.Args, Env: pc.Env, Dir: pc.Cwd,
		URL: pc.URL, Headers: pc.Headers,
		ReadOnly: pc.ReadOnly, TrustAnnotations: pc.TrustAnnotations,
		ClientVersion: Version(),
	}
}

// runtimeBound is implemented by providers that report back to the runtime
// on their own (an upstream whose tool list changes).
type runtimeBound interface {
	Bind(log *slog.Logger, onChange func())
}

// finishProviders runs once the config's providers are added: it adds the
// providers of plugin directories (next to the config, in
// $AGENT_TOOLS_PLUGINS_DIR, in the project directory), then binds every
// provider that reports back to this runtime: its log, and a refresh of the
// catalog when its tools change (the facade then tells clients list_changed).
func (a *App) finishProviders(o Options) {
	a.addPlugins(o)
	onChange := func() { a.Registry.Refresh(context.Background()) }
	for _, st := range a.Registry.Providers() {
		if p, _, ok := a.Registry.Provider(st.Info.ID); ok {
			if b, ok := p.(runtimeBound); ok {
				b.Bind(a.log, onChange)
			}
		}
	}
}

// addPlugins adds the providers plugin directories declare. A broken plugin,
// or one whose id the config already uses, is logged and skipped, and doctor
// lists it.
func (a *App) addPlugins(o Options) {
	env := o.Env
	if env == nil {
		env = os.LookupEnv
	}
	project := o.ProjectDir
	if project == "" {
		project, _ = os.Getwd()
	}
	fail := func(who, dir, status, reason string) {
		a.loadErrors = append(a.loadErrors, provider.Diagnostic{Provider: who, Item: dir, Status: status, Reason: reason})
	}
	plugins, errs := plugin.Discover(plugin.SearchDirs(a.Config.Dir, project, env), env)
	for _, err := range errs {
		who, dir := "plugin", ""
		var pe *plugin.Error
		if errors.As(err, &pe) {
			who, dir, err = filepath.Base(pe.Dir), pe.Dir, pe.Err
		}
		a.log.Error("plugin skipped", "plugin", dir, "err", err)
		fail(who, dir, "failed", "plugin skipped: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	for _, pl := range plugins {
		pc := pl.Provider
		for _, w := range pl.Warnings {
			a.log.Warn("plugin", "plugin", pl.Dir, "warning", w)
			fail(pc.ID, pl.Dir, "skipped", w)
		}
		switch _, taken := a.Config.Provider(pc.ID); {
		case taken:
			a.log.Error("plugin skipped: the config declares the same provider id", "plugin", pl.Dir, "provider", pc.ID)
			fail(pc.ID, pl.Dir, "failed", fmt.Sprintf("plugin skipped: the config already declares provider %q", pc.ID))
			continue
		case !pc.Enabled:
			fail(pc.ID, pl.Dir, "skipped", "plugin disabled (provider.enabled: false)")
			continue
		}
		p, err := buildProvider(pc)
		if err != nil {
			a.log.Error("plugin skipped", "plugin", pl.Dir, "provider", pc.ID, "err", err)
			fail(pc.ID, pl.Dir, "failed", "plugin skipped: "+err.Error())
			continue
		}
		a.log.Info("plugin loaded", "plugin", pl.Dir, "provider", pc.ID, "kind", pc.Kind)
		a.add(p)
	}
}
