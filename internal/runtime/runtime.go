// Package runtime is the engine behind both the public embedding package
// (agenttools) and the agent-tools binary (internal/cli): one runtime with
// three phases (New, registration, Start … Close) over an *app.App. The
// public package is a typed veneer over it; the binary sets the fields
// only it needs (middleware, a tracer, its stdio streams, a profile, the
// project-directory config lookup) and reaches the app with App.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/native"
	"github.com/agent-tools/agent-tools/internal/transport"
)

// Options configure a Runtime. The public package documents the first ones
// (agenttools.Options); the rest are the binary's.
type Options struct {
	ConfigFile    string
	ConfigYAML    []byte
	ProjectDir    string
	Mode          string
	LookupEnv     func(string) (string, bool)
	Logger        *slog.Logger // nil: discarded
	AuditLog      io.Writer    // nil: discarded
	DecisionsFile string
	BuiltIns      bool
	Watch         bool

	// Tracer traces every call (app.Options.Tracer); nil: none.
	Tracer pipeline.Tracer
	// Middleware runs in every call's pipeline (metrics, shutdown drain).
	Middleware []pipeline.Middleware
	// FindConfig looks for agent-tools.yaml in the project directory when no
	// file is named, and falls back to zero-config (repository scripts and
	// the built-ins) instead of the embedded default: what the binary does.
	FindConfig bool
	// Stdin and Stdout replace the process's for ServeStdio (an embedder's
	// pipes; the binary's tests run it in-process).
	Stdin  io.Reader
	Stdout io.Writer
	// Profile serves one profile of the config (app.Options.Profile).
	Profile string
}

// PluginOptions describe a namespace of registered tools.
type PluginOptions struct {
	Description  string
	DiscoverHint string
	ReadOnly     []string // actions that never need confirmation
	NoConfirm    bool
	Disabled     bool
	Timeout      time.Duration
}

// Runtime is an embedded agent-tools runtime. Its methods are safe for
// concurrent use.
type Runtime struct {
	opts Options

	mu        sync.Mutex
	plugins   map[string]*plugin // by namespace
	order     []provider.Provider
	disabled  []string
	a         *app.App
	decisions *decisions.Store
	sessions  map[*Session]struct{}
	def       *Session // Runtime.Call's
	httpH     http.Handler
	closed    bool
}

// plugin is one namespace of registered tools.
type plugin struct {
	p    *native.Provider
	opts PluginOptions
}

const drainOnEOF = 30 * time.Second

// ErrNotStarted is returned by methods that need a started runtime.
var ErrNotStarted = errors.New("agenttools: the runtime is not started (call Start)")

// New checks the options and returns a runtime ready for registration.
// It reads nothing and starts nothing.
func New(o Options) (*Runtime, error) {
	if o.ConfigFile != "" && o.ConfigYAML != nil {
		return nil, errors.New("agenttools: set ConfigFile or ConfigYAML, not both")
	}
	if _, err := facade.ParseMode(o.Mode); err != nil {
		return nil, &app.ConfigError{Err: err}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.AuditLog == nil {
		o.AuditLog = io.Discard
	}
	return &Runtime{opts: o, plugins: map[string]*plugin{}, sessions: map[*Session]struct{}{}}, nil
}

// App is the app of a started runtime (nil before Start).
func (r *Runtime) App() *app.App {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.a
}

// AddPlugin declares the namespace of registered tools before they are
// added. The namespace is normalized (dashes become underscores).
func (r *Runtime) AddPlugin(namespace string, o PluginOptions) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ns, err := native.Normalize(namespace)
	if err != nil {
		return err
	}
	if _, dup := r.plugins[ns]; dup {
		return fmt.Errorf("agenttools: plugin %q is already declared (declare it before adding its tools)", ns)
	}
	_, err = r.pluginLocked(ns, o)
	return err
}

func (r *Runtime) pluginLocked(ns string, o PluginOptions) (*plugin, error) {
	if g, ok := r.plugins[ns]; ok {
		return g, nil
	}
	if r.a != nil {
		return nil, fmt.Errorf("agenttools: plugin %q must be declared before Start", ns)
	}
	if slices.ContainsFunc(r.order, func(q provider.Provider) bool { return q.Info().ID == ns }) {
		return nil, fmt.Errorf("agenttools: %q is already a provider's id", ns)
	}
	desc := o.Description
	if desc == "" {
		desc = "Tools of " + ns + "."
	}
	p, err := native.New(catalog.ProviderInfo{
		ID: ns, Kind: "native", Description: desc, DiscoverHint: o.DiscoverHint,
		RequireConfirm: !o.NoConfirm, Timeout: o.Timeout,
	})
	if err != nil {
		return nil, err
	}
	g := &plugin{p: p, opts: o}
	r.plugins[ns] = g
	r.addLocked(p, o.Disabled)
	return g, nil
}

func (r *Runtime) addLocked(p provider.Provider, disabled bool) {
	r.order = append(r.order, p)
	if disabled {
		r.disabled = append(r.disabled, p.Info().ID)
	}
}

// AddTool registers namespace_{t.Name}, declaring the namespace with the
// zero PluginOptions if it is new. The plugin's ReadOnly list marks the
// tool read-only too.
func (r *Runtime) AddTool(namespace string, t native.Tool) error {
	r.mu.Lock()
	ns, err := native.Normalize(namespace)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	g, err := r.pluginLocked(ns, PluginOptions{})
	r.mu.Unlock()
	if err != nil {
		return err
	}
	t.ReadOnly = t.ReadOnly || slices.Contains(g.opts.ReadOnly, t.Name)
	return g.p.Add(t)
}

// AddProvider adds a provider before Start; Close closes it if it is a
// provider.Closer (the app never closes in-process providers itself).
func (r *Runtime) AddProvider(p provider.Provider, disabled bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := p.Info().ID
	if r.a != nil {
		return fmt.Errorf("agenttools: provider %q must be added before Start", id)
	}
	if r.closed {
		return errors.New("agenttools: the runtime is closed")
	}
	if _, dup := r.plugins[id]; dup || slices.ContainsFunc(r.order, func(q provider.Provider) bool { return q.Info().ID == id }) {
		return fmt.Errorf("agenttools: provider %q is already added", id)
	}
	r.addLocked(p, disabled)
	return nil
}

// Start loads the config, builds every provider and starts serving.
func (r *Runtime) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.a != nil || r.closed {
		return errors.New("agenttools: Start called twice")
	}
	cfg, err := r.config()
	if err != nil {
		return err
	}
	store, err := r.openDecisions()
	if err != nil {
		r.opts.Logger.Error("decisions", "err", err) // a corrupt store never stops the runtime
	}
	a, err := app.New(ctx, app.Options{
		ConfigPath: r.opts.ConfigFile, Config: cfg, ProjectDir: r.opts.ProjectDir, Mode: r.opts.Mode,
		Env: r.opts.LookupEnv, Logger: r.opts.Logger, AuditDefault: r.opts.AuditLog,
		Middleware: r.opts.Middleware, Tracer: r.opts.Tracer, Providers: slices.Clone(r.order), Disabled: slices.Clone(r.disabled),
		Decisions: store,
		Explicit:  !r.opts.FindConfig, BuiltIns: r.opts.BuiltIns, // the binary keeps zero-config's scripts; an embedder serves what it names
		Profile: r.opts.Profile,
	})
	if err != nil {
		return err
	}
	if r.opts.Watch && cfg == nil { // a file to watch (a value cannot change)
		if err := a.Watch(context.WithoutCancel(ctx), 0); err != nil {
			r.opts.Logger.Warn("file watcher unavailable; config changes need a restart", "err", err)
		}
	}
	a.OnChange(r.toolsChanged)
	r.a, r.decisions = a, store
	return nil
}

// config is the config value the options name: nil to load ConfigFile (or
// find one), else the parsed ConfigYAML or the no-file default.
func (r *Runtime) config() (*config.Config, error) {
	o := r.opts
	if o.ConfigFile != "" || (o.FindConfig && o.ConfigYAML == nil) {
		return nil, nil // app.LoadConfig reads it (again on every reload)
	}
	dir, err := r.projectDir()
	if err != nil {
		return nil, err
	}
	if o.ConfigYAML != nil {
		cfg, err := config.Parse(filepath.Join(dir, "ConfigYAML"), o.ConfigYAML, o.LookupEnv)
		if err != nil {
			return nil, &app.ConfigError{Err: err}
		}
		cfg.Path = "" // a value, not a file: nothing to watch
		return cfg, nil
	}
	return config.Default(dir), nil // app.Options.Explicit turns off its scripts and prompts
}

// openDecisions opens the decisions store; a corrupt one is reported and
// replaced by an empty one.
func (r *Runtime) openDecisions() (*decisions.Store, error) {
	return decisions.Open(r.decisionsPath(), r.opts.Logger)
}

// decisionsPath is DecisionsFile, else the file next to the config: the
// named one, or for the binary the one it finds (zero-config: the project
// directory). An embedder without a config file keeps decisions in memory.
func (r *Runtime) decisionsPath() string {
	o := r.opts
	switch {
	case o.DecisionsFile != "":
		return o.DecisionsFile
	case o.ConfigFile != "" || (o.FindConfig && o.ConfigYAML == nil):
		dir, err := r.projectDir()
		if err != nil {
			return ""
		}
		return decisions.PathFor(o.ConfigFile, dir)
	}
	return ""
}

func (r *Runtime) projectDir() (string, error) {
	if r.opts.ProjectDir != "" {
		return r.opts.ProjectDir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("agenttools: %w", err)
	}
	return wd, nil
}

// Close stops the runtime: every session ends, the app closes its
// providers, then the added providers that hold resources are closed.
func (r *Runtime) Close() error {
	r.mu.Lock()
	a := r.a
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	ss := make([]*Session, 0, len(r.sessions))
	for s := range r.sessions {
		ss = append(ss, s)
	}
	added := slices.Clone(r.order)
	r.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
	var errs []error
	if a != nil {
		errs = append(errs, a.Close())
	}
	for _, p := range added {
		if c, ok := p.(provider.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

func (r *Runtime) app() (*app.App, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.a == nil || r.closed {
		return nil, ErrNotStarted
	}
	return r.a, nil
}

// Handler returns the Streamable HTTP endpoint; before Start it answers 503.
func (r *Runtime) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h, err := r.handler()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, req)
	})
}

func (r *Runtime) handler() (http.Handler, error) {
	a, err := r.app()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.httpH == nil {
		o := a.HTTPOptions()
		o.Logger = r.opts.Logger
		h, err := transport.NewHTTP(o)
		if err != nil {
			return nil, err
		}
		r.httpH = h
	}
	return r.httpH, nil
}

// ServeStdio serves MCP over Options.Stdin and Stdout (default: the
// process's) until ctx ends or the client closes its input.
func (r *Runtime) ServeStdio(ctx context.Context) error {
	a, err := r.app()
	if err != nil {
		return err
	}
	var in io.Reader = os.Stdin
	var out io.Writer = os.Stdout
	if r.opts.Stdin != nil {
		in = r.opts.Stdin
	}
	if r.opts.Stdout != nil {
		out = r.opts.Stdout
	}
	// After the client closes stdin, calls in flight get drainOnEOF to answer.
	err = a.Facade.Server().Run(ctx, transport.Stdio(in, out, drainOnEOF))
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// SetEnabled turns a provider on or off at run time (app.SetEnabled).
func (r *Runtime) SetEnabled(ctx context.Context, providerID string, enabled bool) error {
	a, err := r.app()
	if err != nil {
		return err
	}
	return a.SetEnabled(ctx, providerID, enabled)
}

// toolsChanged tells every in-process session the tool list changed.
func (r *Runtime) toolsChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.sessions {
		s.signal()
	}
}
