// Package app wires a runtime from a config: it is the one place that knows
// every concrete provider kind. The registry, pipeline and facade it assembles
// know only interfaces.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/provider/local"
	"github.com/agent-tools/agent-tools/internal/registry"
)

// DefaultTimeout bounds a call when neither the tool nor its provider sets a deadline.
const DefaultTimeout = 60 * time.Second

// Options say where the runtime finds its config and where it logs.
type Options struct {
	// ConfigPath is an explicit --config; "" looks for ./agent-tools.yaml in
	// ProjectDir and falls back to zero-config.
	ConfigPath string
	// ProjectDir is the directory served (default: the working directory).
	ProjectDir string
	// Mode overrides the config's exposure mode when non-empty.
	Mode string
	// Env looks up ${VAR}s (default os.LookupEnv).
	Env func(string) (string, bool)
	// Logger receives structured logs (default: discard).
	Logger *slog.Logger
	// AuditDefault is where the audit log goes when the config says "" (stderr by default).
	AuditDefault io.Writer
	// Middleware runs in every call's pipeline between Audit and LoopGuard
	// (metrics, shutdown drain).
	Middleware []pipeline.Middleware
	// Providers are in-process providers registered after the built-ins and
	// the local scripts (embedding, benchmarks). The caller owns them: the
	// app never starts or closes them.
	Providers []provider.Provider
}

// App is a loaded runtime. Config, Registry and Call are those built at
// start; after a config reload (see Watch) Current has the live ones, while
// Facade stays the same and follows them.
type App struct {
	Config   *config.Config
	Registry *registry.Registry
	Call     pipeline.Handler
	Facade   *facade.Facade
	Mode     facade.Mode

	opts    Options
	ctx     context.Context // New's, for providers started by a reload
	live    liveState
	reload  reloadState
	log     *slog.Logger
	closers []io.Closer
	// loadErrors are providers that could not be built (doctor lists them).
	loadErrors []provider.Diagnostic
}

// ConfigError marks a configuration problem (exit status 2).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig finds and loads the config as Options say.
func LoadConfig(o Options) (*config.Config, error) {
	dir := o.ProjectDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("finding the project directory: %w", err)
		}
		dir = wd
	}
	path := o.ConfigPath
	if path == "" {
		p, ok := config.Find(dir)
		if !ok {
			return config.Default(dir), nil
		}
		path = p
	}
	cfg, err := config.Load(path, o.Env)
	if err != nil {
		return nil, &ConfigError{err}
	}
	return cfg, nil
}

// New loads the config and builds the runtime. Providers that fail to build
// are logged and skipped; only a bad config is an error.
func New(ctx context.Context, o Options) (*App, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.AuditDefault == nil {
		o.AuditDefault = os.Stderr
	}
	cfg, err := LoadConfig(o)
	if err != nil {
		return nil, err
	}
	modeName := cfg.Mode
	if o.Mode != "" {
		modeName = o.Mode
	}
	mode, err := facade.ParseMode(modeName)
	if err != nil {
		return nil, &ConfigError{err}
	}
	rules := policy.Rules{Allow: cfg.Policy.Allow, Deny: cfg.Policy.Deny, Confirm: policy.ConfirmMode(cfg.Policy.Confirm)}
	if err := rules.Validate(); err != nil {
		return nil, &ConfigError{fmt.Errorf("policy: %w", err)}
	}

	a := &App{Config: cfg, Mode: mode, log: o.Logger, Registry: registry.New(o.Logger), opts: o, ctx: ctx}
	projectDir := cfg.Dir
	a.add(builtin.New(builtin.Options{Status: a.status}))
	if cfg.Local.Enabled {
		a.add(local.New(local.Options{
			Dir: cfg.Local.Dir, ProjectDir: projectDir, RequireConfirm: cfg.Local.RequireConfirm,
			Timeout: cfg.Local.Timeout.Duration, Description: cfg.Local.Description, Logger: o.Logger,
		}))
	}
	for _, pc := range cfg.Providers {
		if !pc.Enabled {
			continue
		}
		p, err := buildProvider(pc)
		if err != nil {
			o.Logger.Error("provider skipped", "provider", pc.ID, "kind", pc.Kind, "err", err)
			a.loadErrors = append(a.loadErrors, provider.Diagnostic{Provider: pc.ID, Status: "failed", Reason: err.Error()})
			continue
		}
		a.add(p)
	}
	for _, p := range o.Providers {
		if err := a.Registry.Add(p); err != nil {
			o.Logger.Error("provider skipped", "provider", p.Info().ID, "err", err)
			a.loadErrors = append(a.loadErrors, provider.Diagnostic{Provider: p.Info().ID, Status: "failed", Reason: err.Error()})
		}
	}

	audit, closeAudit, err := openAudit(cfg.Audit.Path, o.AuditDefault)
	if err != nil {
		return nil, &ConfigError{err}
	}
	if closeAudit != nil {
		a.closers = append(a.closers, closeAudit)
	}
	lg := cfg.Limits.LoopGuard
	guard := policy.NewLoopGuard()
	guard.RepeatAfter, guard.RefuseAfter, guard.CoolDown = lg.RepeatAfter, lg.RefuseAfter, lg.CoolDown.Duration
	a.Call = pipeline.New(pipeline.Options{
		Catalog: a.Registry, Rules: rules, Guard: guard, AuditTo: audit, Extra: o.Middleware,
		Execute: pipeline.ExecuteOptions{DefaultTimeout: DefaultTimeout, MaxResultChars: cfg.Limits.MaxResultChars},
	})
	a.live.init(a)
	// The facade reads the live catalog and call path, so that a config
	// reload swaps them under connected sessions (watch.go).
	a.Facade = facade.New(liveCatalog{a}, a.dispatch, facade.Options{Mode: mode, Rules: rules, Version: Version(), Logger: o.Logger})
	a.Registry.OnChange(a.Facade.Sync)
	for _, p := range a.startable() {
		if err := p.Start(ctx); err != nil {
			o.Logger.Error("provider failed to start", "provider", p.(provider.Provider).Info().ID, "err", err)
		}
	}
	a.Registry.Refresh(ctx)
	a.Facade.Sync()
	return a, nil
}

func (a *App) add(p provider.Provider) {
	if err := a.Registry.Add(p); err != nil {
		a.log.Error("provider skipped", "provider", p.Info().ID, "err", err)
		a.loadErrors = append(a.loadErrors, provider.Diagnostic{Provider: p.Info().ID, Status: "failed", Reason: err.Error()})
		return
	}
	if c, ok := p.(provider.Closer); ok {
		a.closers = append(a.closers, c)
	}
}

func (a *App) startable() []provider.Starter {
	var out []provider.Starter
	for _, st := range a.Registry.Providers() {
		if p, _, ok := a.Registry.Provider(st.Info.ID); ok {
			if s, ok := p.(provider.Starter); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func openAudit(path string, def io.Writer) (io.Writer, io.Closer, error) {
	switch path {
	case config.AuditOff:
		return nil, nil, nil
	case "":
		return def, nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("opening audit log: %w", err)
	}
	return f, f, nil
}

// Diagnostics are doctor's lines: providers that failed to build, then the registry's.
func (a *App) Diagnostics() []provider.Diagnostic {
	g := a.current()
	return append(append([]provider.Diagnostic(nil), g.loadErrors...), g.reg.Diagnostics()...)
}

// Close stops the watcher and releases providers and the audit log.
func (a *App) Close() error {
	a.stopWatch()
	return a.live.close()
}

func closeAll(closers []io.Closer) error {
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i].Close())
	}
	return errors.Join(errs...)
}

// status is what the runtime_status tool reports.
func (a *App) status(context.Context) any {
	type prov struct {
		ID      string `json:"id"`
		Kind    string `json:"kind"`
		Enabled bool   `json:"enabled"`
		Tools   int    `json:"tools"`
		Skills  int    `json:"skills"`
		Error   string `json:"error,omitempty"`
	}
	var ps []prov
	g := a.current()
	for _, st := range g.reg.Providers() {
		p := prov{ID: st.Info.ID, Kind: st.Info.Kind, Enabled: st.Enabled, Tools: st.Tools, Skills: len(st.Skills)}
		if st.Err != nil {
			p.Error = st.Err.Error()
		}
		ps = append(ps, p)
	}
	var problems []provider.Diagnostic
	for _, d := range a.Diagnostics() {
		if d.Status != "ok" {
			problems = append(problems, d)
		}
	}
	return map[string]any{
		"version": Version(), "mode": a.Mode, "config": g.cfg.Path, "projectDir": g.cfg.Dir,
		"providers": ps, "problems": problems,
	}
}

// Version is the module version stamped by the Go toolchain ("devel" in a checkout).
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
