// Package agenttools embeds the agent-tools runtime in a Go service (seed
// 001): the service registers its own functions as MCP tools, grouped by
// plugin, mounts one [http.Handler] at /mcp for external agents, calls the
// same tools in-process for its own agent, and toggles plugins at run time.
//
// Every call, whichever way it arrives (Streamable HTTP, stdio, in-process),
// takes the runtime's one pipeline: argument validation against the tool's
// schema, allow/deny policy, confirmation of calls that change state, the
// audit log and the loop guard. Handlers hold no protocol code; a returned
// error reaches the agent as a result that teaches (isError, a code and a
// hint), never as a protocol fault.
//
// A Runtime has three phases: New (no side effects), registration
// ([Runtime.RegisterTool], [AddTool], [Runtime.AddProvider]), then
// [Runtime.Start] and, at the end, [Runtime.Close].
package agenttools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/embedhook"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/native"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/tracing"
	"github.com/agent-tools/agent-tools/internal/transport"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Runtime. The zero value is a runtime with no config
// file: progressive mode, no repository scripts, only the tools you register.
type Options struct {
	// ConfigFile is an agent-tools.yaml to load (upstream MCP servers,
	// policy, audit, server.http auth). Mutually exclusive with ConfigYAML.
	ConfigFile string
	// ConfigYAML is the same config as a value, parsed and validated exactly
	// like the file.
	//
	// With either, the runtime serves what the program registers and what
	// the config names: the repository scripts (./.agents/tools) and prompts
	// that the agent-tools binary picks up by default are served only when
	// the config has a local: or prompts: section, and the built-ins only
	// with BuiltIns.
	ConfigYAML []byte
	// ProjectDir is the directory relative paths resolve against (default:
	// the working directory).
	ProjectDir string
	// Mode is the exposure mode: "progressive", "search", "flat" or "text"
	// (default: the config's, else progressive). Seed 001 uses "flat".
	Mode string
	// LookupEnv resolves ${VAR} in the config (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Logger receives the runtime's structured logs (default: discarded).
	Logger *slog.Logger
	// AuditLog receives one JSON line per call when the config names no
	// audit file (default: discarded).
	AuditLog io.Writer
	// DecisionsFile is where "always allow" answers are kept (default: next
	// to ConfigFile; with no config file they last as long as the process).
	DecisionsFile string
	// BuiltIns also serves the runtime's own tools: runtime_status
	// (version, mode, providers) and execute_javascript (a sandbox whose
	// tools.call takes the same pipeline). Off by default: an embedding
	// program serves what it registers.
	BuiltIns bool
	// Watch reloads ConfigFile when it changes (what `agent-tools serve`
	// does); the enabled set survives a reload.
	Watch bool
	// TracerProvider, when set, traces every call with the embedding
	// program's OpenTelemetry provider: the spans `agent-tools serve` makes
	// (a root span per call, one child per pipeline stage; never argument
	// values). Nil: no traces.
	TracerProvider trace.TracerProvider

	ext embedhook.Extension // the binary's additions (internal/cli)
}

// Runtime is an embedded agent-tools runtime. Its methods are safe for
// concurrent use.
type Runtime struct {
	opts Options

	mu        sync.Mutex
	groups    map[string]*group // by namespace
	order     []string
	a         *app.App
	decisions *decisions.Store
	sessions  map[*Session]struct{}
	def       *Session // Runtime.Call's
	httpH     http.Handler
	closed    bool
}

// group is one provider of registered tools.
type group struct {
	p    *native.Provider
	opts ProviderOptions
}

const drainOnEOF = 30 * time.Second

// ErrNotStarted is returned by methods that need a started runtime.
var ErrNotStarted = errors.New("agenttools: the runtime is not started (call Start)")

// ErrUnknownProvider is returned by SetEnabled for an id that is not loaded.
var ErrUnknownProvider = status.ErrUnknownProvider

// ErrUnavailable is returned (wrapped, with the reason) by SetEnabled for a
// provider of the config that could not be built, e.g. an unset ${VAR}.
var ErrUnavailable = status.ErrUnavailable

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
	return &Runtime{opts: o, groups: map[string]*group{}, sessions: map[*Session]struct{}{}}, nil
}

func init() {
	embedhook.App = func(rt any) *app.App {
		r := rt.(*Runtime)
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.a
	}
	embedhook.Extend = func(opts any, x embedhook.Extension) {
		o := opts.(*Options)
		o.ext.Middleware = append(o.ext.Middleware, x.Middleware...)
		if x.Tracer != nil {
			o.ext.Tracer = x.Tracer
		}
		o.ext.Providers = append(o.ext.Providers, x.Providers...)
		o.ext.FindConfig = o.ext.FindConfig || x.FindConfig
		if x.Stdin != nil {
			o.ext.Stdin, o.ext.Stdout = x.Stdin, x.Stdout
		}
		if x.Profile != "" {
			o.ext.Profile = x.Profile
		}
	}
}

// Start loads the config, builds every provider and starts serving the
// registered tools. Tools may still be registered afterwards in namespaces
// that exist; a new namespace must be added before Start.
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
	ps := append([]provider.Provider(nil), r.opts.ext.Providers...)
	var off []string
	for _, ns := range r.order {
		g := r.groups[ns]
		ps = append(ps, g.p)
		if g.opts.Disabled {
			off = append(off, ns)
		}
	}
	a, err := app.New(ctx, app.Options{
		ConfigPath: r.opts.ConfigFile, Config: cfg, ProjectDir: r.opts.ProjectDir, Mode: r.opts.Mode,
		Env: r.opts.LookupEnv, Logger: r.opts.Logger, AuditDefault: r.opts.AuditLog,
		Middleware: r.opts.ext.Middleware, Tracer: r.tracer(), Providers: ps, Disabled: off, Decisions: store,
		Explicit: !r.opts.ext.FindConfig, BuiltIns: r.opts.BuiltIns, // the binary keeps zero-config's scripts; an embedder serves what it names
		Profile: r.opts.ext.Profile,
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

// config is the config value New's options name: nil to load ConfigFile
// (or find one), else the parsed ConfigYAML or the no-file default.
func (r *Runtime) config() (*config.Config, error) {
	o := r.opts
	if o.ConfigFile != "" || (o.ext.FindConfig && o.ConfigYAML == nil) {
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
	case o.ConfigFile != "" || (o.ext.FindConfig && o.ConfigYAML == nil):
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

// Close stops the runtime: every session ends and providers are released.
func (r *Runtime) Close() error {
	r.mu.Lock()
	a := r.a
	r.closed = true
	ss := make([]*Session, 0, len(r.sessions))
	for s := range r.sessions {
		ss = append(ss, s)
	}
	r.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
	if a == nil {
		return nil
	}
	return a.Close()
}

func (r *Runtime) app() (*app.App, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.a == nil || r.closed {
		return nil, ErrNotStarted
	}
	return r.a, nil
}

// Handler returns the Streamable HTTP endpoint, to mount at /mcp on the
// service's mux: the same transport, guards (Origin, Host, body size, rate
// limit) and auth (server.http tokens and OIDC from the config) as
// `agent-tools serve --http`. Before Start it answers 503.
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

// ServeStdio serves MCP over the process's stdin and stdout until ctx ends
// or the client closes stdin (for CLI agents).
func (r *Runtime) ServeStdio(ctx context.Context) error {
	a, err := r.app()
	if err != nil {
		return err
	}
	var in io.Reader = os.Stdin
	var out io.Writer = os.Stdout
	if r.opts.ext.Stdin != nil {
		in, out = r.opts.ext.Stdin, r.opts.ext.Stdout
	}
	// After the client closes stdin, calls in flight get drainOnEOF to answer.
	err = a.Facade.Server().Run(ctx, transport.Stdio(in, out, drainOnEOF))
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// SetEnabled turns a provider (a plugin) on or off at run time: tools/list,
// discover and search change at once and every connected session, over
// HTTP, stdio or in-process, is told notifications/tools/list_changed.
// Calls already running finish; a call that races with a disable gets
// PROVIDER_UNAVAILABLE and never half-runs. The choice survives a config
// reload. An unknown id is ErrUnknownProvider; a provider whose config
// cannot be built (unset ${VAR}s) cannot be enabled, and the error says why.
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

// tracer is the pipeline's tracer: the binary's (serve's OTLP setup) when it
// set one, else the embedding program's TracerProvider, else none.
func (r *Runtime) tracer() pipeline.Tracer {
	if r.opts.ext.Tracer != nil {
		return r.opts.ext.Tracer
	}
	if r.opts.TracerProvider != nil {
		return tracing.NewHook(r.opts.TracerProvider)
	}
	return nil
}
