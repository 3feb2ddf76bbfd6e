// Package app wires a runtime from a config: it is the one place that knows
// every concrete provider kind. The registry, pipeline and facade it assembles
// know only interfaces.
package app

import (
	"context"
	"errors"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/prompts"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/skills"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/text"
)

// DefaultTimeout bounds a call when neither the tool nor its provider sets a deadline.
const DefaultTimeout = 60 * time.Second

// Options say where the runtime finds its config and where it logs.
type Options struct {
	// ConfigPath is an explicit --config; "" looks for ./agent-tools.yaml in
	// ProjectDir and falls back to zero-config.
	ConfigPath string
	// Config, when set, is used instead of reading a file (an embedder's
	// config value); ConfigPath is then ignored and a reload re-applies it.
	Config *config.Config
	// ProjectDir is the directory served (default: the working directory).
	ProjectDir string
	// Mode overrides the config's exposure mode when non-empty.
	Mode string
	// Profile makes the main facade serve one profile of the config
	// (serve --profile; profiles.go); "" serves the default view.
	Profile string
	// Env looks up ${VAR}s (default os.LookupEnv).
	Env func(string) (string, bool)
	// Logger receives structured logs (default: discard).
	Logger *slog.Logger
	// AuditDefault is where the audit log goes when the config says "" (stderr by default).
	AuditDefault io.Writer
	// Middleware runs in every call's pipeline between Audit and LoopGuard
	// (metrics, shutdown drain).
	Middleware []pipeline.Middleware
	// Tracer records every call as spans (internal/tracing); nil when
	// tracing is off, which installs nothing on the call path.
	Tracer pipeline.Tracer
	// Providers are in-process providers registered after the built-ins and
	// the local scripts (embedding, benchmarks). The caller owns them: the
	// app never starts or closes them.
	Providers []provider.Provider
	// Disabled lists providers (of any origin) that start disabled; SetEnabled
	// turns them on. The config's own enabled: false is honoured too.
	Disabled []string
	// Decisions remembers a person's "always allow" answers (nil: none).
	Decisions pipeline.Decisions
	// Explicit is an embedding program's runtime: it serves only what it
	// registers or its config names. The repository's scripts
	// (./.agents/tools) and prompts (./.agents/prompts) that zero-config
	// and the binary pick up by default are served only when the config has
	// a local: or prompts: section, and the built-ins only with BuiltIns.
	Explicit bool
	// BuiltIns serves runtime_status and execute_javascript in an Explicit
	// runtime (the binary always serves them).
	BuiltIns bool
}

// App is a loaded runtime. The live generation (config, registry, call
// path) is swapped by a reload; read it through Config, Registry and Call,
// which never go stale. Facade is built once and follows every generation.
type App struct {
	Facade *facade.Facade
	Mode   facade.Mode

	opts     Options
	ctx      context.Context               // New's, for providers started by a reload
	secrets  *secrets.Resolver             // this app's secret references (cache kept across reloads)
	fac      atomic.Pointer[facade.Facade] // Facade, for providers reporting from their own goroutines
	shared   *Shared                       // outlives reloads: see shared.go
	live     liveState
	reload   reloadState
	enabled  enabledSet     // outlives reloads: see enabled.go
	profiles profileFacades // profiles.go
	tap      auditTap       // outlives reloads: see audittap.go
	pins     pinState       // outlives reloads: see pins.go
	cluster  clusterWatch   // the other replicas' changes: see cluster.go
	log      *slog.Logger
}

// ConfigError marks a configuration problem (exit status 2).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig finds and loads the config as Options say.
func LoadConfig(o Options) (*config.Config, error) {
	cfg, err := loadConfig(o)
	if err == nil && o.Explicit {
		explicitOnly(cfg)
	}
	return cfg, err
}

// explicitOnly turns off the defaults an embedder did not ask for.
func explicitOnly(cfg *config.Config) {
	if !cfg.Sets("local") {
		cfg.Local.Enabled = false
	}
	if !cfg.Sets("prompts") {
		cfg.Prompts.Dir = ""
	}
}

func loadConfig(o Options) (*config.Config, error) {
	if o.Config != nil {
		// A config parsed by the embedder still carries what it interpolated.
		registerSecrets(o.Config)
		return o.Config, nil
	}
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
	registerSecrets(cfg)
	return cfg, nil
}

// registerSecrets: every value interpolated into a secret-bearing place is
// scrubbed from every output of the process from now on (internal/redact).
func registerSecrets(cfg *config.Config) {
	for _, s := range cfg.Secrets() {
		redact.Add(s.Name, s.Value)
	}
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
	a := &App{opts: o, ctx: ctx, log: o.Logger, secrets: secrets.NewResolver()}
	a.enabled.init(o.Disabled)
	g, err := a.build(ctx)
	if err != nil {
		return nil, err
	}
	a.Mode = g.mode
	a.live.cur.Store(g)
	// The facade reads the live catalog and call path, so that a config
	// reload swaps them under connected sessions (watch.go).
	mode := g.mode
	if o.Profile != "" { // serve --profile: the main facade is the profile's (profiles.go)
		if mode, err = a.profileMode(g, o.Profile); err != nil {
			return nil, err
		}
		a.Mode = mode
	}
	a.Facade = facade.New(liveCatalog{a}, a.dispatch, facade.Options{
		Mode: mode, Rules: g.rules, Version: Version(), Logger: o.Logger, SessionID: a.shared.Sessions.New,
		Prompts: prompts.NewDir(g.cfg.Prompts.Dir, o.Logger), Profile: o.Profile, Access: a.access,
		ScriptsMayMutate: a.scriptsMayMutate,
	})
	// A tools/call runs deep on the SDK's per-request goroutine: its stack
	// is grown once while shallow rather than copied again and again below.
	a.Facade.Server().AddReceivingMiddleware(growOnCall)
	// Outermost on both directions: every answer and every message the MCP
	// server sends is scrubbed of the secrets the runtime knows (internal/redact).
	a.Facade.Server().AddReceivingMiddleware(redact.Default.Middleware())
	a.Facade.Server().AddSendingMiddleware(redact.Default.SendingMiddleware())
	a.fac.Store(a.Facade)
	g.reg.OnChange(a.changed)
	a.Facade.Sync()
	a.watchCluster()
	return a, nil
}

// syncPrompts republishes upstream prompts once the facade exists.
func (a *App) syncPrompts() {
	if f := a.fac.Load(); f != nil {
		f.SyncPrompts()
	}
}

// build loads the config and builds one generation from it: providers
// (built-ins, local scripts, the config's, plugins, the embedder's), registry
// and pipeline; it starts the providers and loads their tools.
func (a *App) build(ctx context.Context) (*generation, error) {
	o := a.opts
	cfg, err := LoadConfig(o)
	if err != nil {
		return nil, err
	}
	// Secret-store references are resolved now that the config is put to
	// use (config validate only checks them): those outside providers here,
	// each provider's when it is built (buildProvider).
	cfg.ConfigureResolver(a.secrets)
	if err := cfg.ResolveSecrets(ctx, a.secrets); err != nil {
		return nil, &ConfigError{err}
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
	if a.shared == nil {
		if a.shared, err = newShared(cfg, o.Env, o.Logger); err != nil {
			return nil, err
		}
		// With Redis, "always allow" decisions are shared by the replicas too.
		if d, ok := o.Decisions.(interface{ Share(*state.Signed) }); ok && a.shared.Redis != nil {
			d.Share(a.shared.Signed)
		}
		a.sharedChoices(ctx) // and so are the providers switched on or off
	}
	audit, closeAudit, err := openAudit(cfg.Audit.Path, o.AuditDefault)
	if err != nil {
		return nil, &ConfigError{err}
	}
	audit = a.tap.tee(audit) // the console's live tail

	reg := registry.NewWith(o.Logger, registry.Options{Scheme: cfg.Scheme(), Rename: cfg.Renames(),
		FlatMaxNameLength: cfg.FlatMaxNameLength(), Deny: cfg.Policy.Deny, Allow: cfg.Policy.Allow,
		Pins: a.openPins(cfg, audit), Scan: scanMode(cfg), Overrides: cfg.Overrides()})
	g := newGeneration(cfg, reg, o.Logger)
	g.mode, g.rules, g.onPrompts = mode, rules, a.syncPrompts
	g.access = accessOf(cfg) // profiles.go
	project := o.ProjectDir
	if project == "" {
		project, _ = os.Getwd()
	}
	g.deps = provider.Deps{Log: o.Logger, ProjectDir: project, ConfigDir: cfg.Dir, Version: Version(), Env: o.Env, Logins: a.shared.Logins, Secrets: a.secrets, Status: a.status}
	if closeAudit != nil {
		g.closers = append(g.closers, closeAudit)
	}
	g.withEmbeddings(cfg.Index.Embeddings, cfg.Index.Semantic)
	for _, pc := range cfg.HostEntries(!o.Explicit || o.BuiltIns) { // builtin (code:) and local (local:)
		p, err := provider.Build(pc, g.deps)
		if err != nil {
			g.failed(pc.ID, "", err)
			continue
		}
		g.add(p)
	}
	for _, pc := range cfg.Providers {
		if a.holdEntry(g, pc) { // a registry entry not approved yet: nothing of it runs (held.go)
			continue
		}
		p, err := buildProvider(pc, g.deps)
		if err != nil {
			g.unbuilt(pc, "", err)
			continue
		}
		g.addAs(g.withSkills(p, pc.Skills, nil, o.Logger), pc.Enabled)
	}
	g.addPlugins(o)
	for _, p := range o.Providers {
		if err := g.reg.Add(p); err != nil {
			g.failed(p.Info().ID, "", err)
			continue
		}
		g.all[p.Info().ID] = p
	}
	g.applyEnabled(ctx, a.enabled.snapshot())
	if prev := a.current(); prev != nil { // a reload: tools switched off stay known as off
		g.off.inherit(prev.off, g.reg)
	}
	g.bind()

	lg := cfg.Limits.LoopGuard
	// The guard's counts and the token book live in the shared store, so
	// they survive this reload (and are shared by replicas with Redis).
	guard := policy.NewLoopGuard()
	guard.RepeatAfter, guard.RefuseAfter, guard.CoolDown = lg.RepeatAfter, lg.RefuseAfter, lg.CoolDown.Duration
	guard.Store = a.shared.Store
	g.gate = policy.NewGate(rules, g.access, cfg.Policy.Operators)
	g.cache = resultCache(cfg, g.reg, a.shared.sealed(), a.shared.Redis != nil, o.Logger) // cache.go
	g.call = pipeline.New(pipeline.Options{
		Catalog: gatedCatalog{g.reg, g.off}, Rules: rules, Access: g.access, Gate: g.gate, Decisions: o.Decisions, Guard: guard,
		Tokens: a.shared.Tokens, Replica: a.shared.Replica, AuditTo: audit, Extra: o.Middleware, Tracer: o.Tracer,
		Execute:     pipeline.ExecuteOptions{DefaultTimeout: DefaultTimeout, MaxResultChars: cfg.Limits.MaxResultChars},
		ResultGuard: resultGuard(cfg.Security.Results), // results.go
		ResultCache: cacheStage(g.cache),               // cache.go
		Quota:       quotaStage(cfg, a.shared, o.Logger),
	})
	g.start(ctx)
	return g, nil
}

func newGeneration(cfg *config.Config, reg *registry.Registry, log *slog.Logger) *generation {
	return &generation{cfg: cfg, reg: reg, log: log,
		startOff: map[string]bool{}, unavailable: map[string]string{}, unbuiltOn: map[string]bool{}, held: map[string]HeldEntry{}, started: map[string]bool{}, all: map[string]provider.Provider{}, off: &offTools{}}
}

// add registers a provider of the generation (and closes it with it).
func (g *generation) add(p provider.Provider) {
	if err := g.reg.Add(p); err != nil {
		g.failed(p.Info().ID, "", err)
		return
	}
	g.all[p.Info().ID] = p
	if c, ok := p.(provider.Closer); ok {
		g.closers = append(g.closers, c)
	}
}

// failed records a provider that could not be built (doctor lists it).
func (g *generation) failed(id, item string, err error) {
	g.log.Error("provider skipped", "provider", id, "err", err)
	g.loadErrors = append(g.loadErrors, provider.Diagnostic{Provider: id, Item: item, Status: "failed", Reason: err.Error()})
}

// withSkills adds the skills of dir (or of the listed files in it) to p.
func (g *generation) withSkills(p provider.Provider, dir string, files []string, log *slog.Logger) provider.Provider {
	if dir == "" {
		return p
	}
	info := p.Info()
	// A skill's tools.call and tools.canonical name the provider's tools as
	// the catalog does: the scheme in force and the provider's renames.
	canonical := func(tool string) (string, error) {
		if t, ok := g.reg.Find(info.ID, tool); ok {
			return t.Canonical, nil
		}
		return g.reg.Scheme().Canonical(info.ID, tool, info.HostLocal)
	}
	return skills.Wrap(p, dir, skills.Options{Files: files, Logger: log, Canonical: canonical,
		Memory: g.cfg.Code.Memory, CPU: g.cfg.Code.CPU.Duration}) // a skill's process has a script's limits
}

// start starts the providers that have a start phase, loads every tool, and
// checks the skills' related links across providers.
func (g *generation) start(ctx context.Context) {
	for _, st := range g.reg.Providers() {
		if p, _, ok := g.reg.Provider(st.Info.ID); ok { // disabled ones start when enabled
			g.startOne(ctx, st.Info.ID, p)
		}
	}
	g.reg.Refresh(ctx)
	var all []catalog.Skill
	for _, st := range g.reg.Providers() {
		all = append(all, st.Skills...)
	}
	g.loadErrors = append(g.loadErrors, skills.CheckRelated(all, g.log)...)
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
	return bufferedAudit(f) // see auditbuf.go
}

// Diagnostics are doctor's lines: providers that failed to build, then the registry's.
func (a *App) Diagnostics() []provider.Diagnostic {
	g := a.current()
	out := append(append([]provider.Diagnostic(nil), g.loadErrors...), g.reg.Diagnostics()...)
	out = append(out, semanticDiagnostics(g.reg)...)
	out = append(out, cacheDiagnostics(g)...) // cache.go
	return append(out, promptDiagnostics(g)...)
}

// promptDiagnostics are doctor's prompt lines: every prompt file served
// (ok) or skipped (why), then each upstream's prompts.
func promptDiagnostics(g *generation) []provider.Diagnostic {
	var out []provider.Diagnostic
	ps, _, problems := prompts.NewDir(g.cfg.Prompts.Dir, nil).Load()
	for _, p := range ps {
		reason := "served as prompt " + p.Name
		if p.Description != "" {
			reason += ": " + p.Description
		}
		out = append(out, provider.Diagnostic{Provider: "prompts", Item: p.Name, Status: "ok", Reason: reason})
	}
	for _, p := range problems {
		out = append(out, provider.Diagnostic{Provider: "prompts", Item: p.File, Status: "skipped", Reason: p.Reason})
	}
	for _, st := range g.reg.Providers() {
		p, _, ok := g.reg.Provider(st.Info.ID)
		if !ok {
			continue // disabled: its prompts are not served
		}
		up, ok := provider.As[interface{ UpstreamPrompts() []*sdk.Prompt }](p)
		if !ok {
			continue
		}
		var names []string
		for _, pr := range up.UpstreamPrompts() {
			if pr != nil && pr.Name != "" {
				names = append(names, pr.Name)
			}
		}
		if len(names) > 0 {
			out = append(out, provider.Diagnostic{Provider: st.Info.ID, Item: "prompts", Status: "ok",
				Reason: fmt.Sprintf("%d upstream prompts served: %s", len(names), text.Clip(strings.Join(names, ", "), 300))})
		}
	}
	return out
}

// Close stops the watcher and releases providers and the audit log.
func (a *App) Close() error {
	a.stopWatch()
	a.stopCluster()
	a.pins.close()
	err := a.live.close()
	if a.shared != nil {
		err = errors.Join(err, a.shared.Close())
	}
	return err
}

func closeAll(closers []io.Closer) error {
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i].Close())
	}
	return errors.Join(errs...)
}

// status is what the runtime_status tool reports: Status without the
// paths of the user's files (status.ForModel); doctor and the CLI read
// Status itself.
func (a *App) status(context.Context) any {
	home, _ := os.UserHomeDir()
	return a.Status().ForModel(home)
}

// Version is the module version stamped by the Go toolchain ("devel" in a checkout).
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// growOnCall grows the stack of the goroutine serving a tools/call once, at
// its top (jsonrpcwire.GrowStack).
func growOnCall(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			jsonrpcwire.GrowStack()
		}
		return next(ctx, method, req)
	}
}

// Secrets is the resolver of this app's secret references (doctor asks it
// whether each resolves).
func (a *App) Secrets() *secrets.Resolver { return a.secrets }
