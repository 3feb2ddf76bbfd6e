// Package agenttools embeds the agent-tools runtime in a Go service: the
// service adds its own functions as MCP tools, grouped by plugin, or whole
// backends of its own ([Provider]); mounts one [http.Handler] at /mcp for
// external agents; calls the same tools in-process for its own agent; and
// toggles plugins at run time.
//
// Every call, whichever way it arrives (Streamable HTTP, stdio, in-process),
// takes the runtime's one pipeline: argument validation against the tool's
// schema, allow/deny policy, confirmation of calls that change state, the
// audit log and the loop guard. Handlers hold no protocol code; a returned
// error reaches the agent as a result that teaches (isError, a code and a
// hint), never as a protocol fault.
//
// A Runtime has three phases: New (no side effects), registration
// ([Runtime.AddTool], [AddTool], [Runtime.AddPlugin], [Runtime.AddProvider]),
// then [Runtime.Start] and, at the end, [Runtime.Close]. The names follow
// the official go-sdk's (mcp.Server.AddTool, mcp.AddTool).
//
// A plugin is a namespace of tools the program registers one by one; a
// provider is a backend that lists and runs its own tools. Both are turned
// on and off with [Runtime.SetEnabled].
package agenttools

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/runtime"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/toolerr"
	"github.com/agent-tools/agent-tools/internal/tracing"
)

// Options configure a Runtime. The zero value is a runtime with no config
// file: progressive mode, no repository scripts, only the tools you add.
type Options struct {
	// ConfigFile is an agent-tools.yaml to load (upstream MCP servers,
	// policy, audit, server.http auth). Mutually exclusive with ConfigYAML.
	ConfigFile string
	// ConfigYAML is the same config as a value, parsed and validated exactly
	// like the file.
	//
	// With either, the runtime serves what the program adds and what the
	// config names: the repository scripts (./.agents/tools) and prompts
	// that the agent-tools binary picks up by default are served only when
	// the config has a local: or prompts: section, and the built-ins only
	// with BuiltIns.
	ConfigYAML []byte
	// ProjectDir is the directory relative paths resolve against (default:
	// the working directory).
	ProjectDir string
	// Mode is the exposure mode: "progressive", "search", "flat" or "text"
	// (default: the config's, else progressive). A service whose agents
	// should see every tool by its own name uses "flat".
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
	// program serves what it adds.
	BuiltIns bool
	// Watch reloads ConfigFile when it changes (what `agent-tools serve`
	// does); the enabled set survives a reload.
	Watch bool
	// TracerProvider, when set, traces every call with the embedding
	// program's OpenTelemetry provider: the spans `agent-tools serve` makes
	// (a root span per call, one child per pipeline stage; never argument
	// values). Nil: no traces.
	TracerProvider trace.TracerProvider
	// Stdin and Stdout are the streams ServeStdio serves MCP on (default:
	// the process's os.Stdin and os.Stdout).
	Stdin  io.Reader
	Stdout io.Writer
	// RelistInterval bounds how stale the tool list of an added [Provider]
	// that is not a [ChangeNotifier] may be: the runtime re-reads its Tools
	// at most once per interval on the call path, so that a call of one of
	// its tools costs about what a registered tool's does (default
	// [DefaultRelistInterval]; negative: on every read of the catalog). A
	// call of a tool it does not know yet re-reads it at once whatever the
	// interval. A ChangeNotifier is re-read when it reports a change, and
	// registered tools when they are added.
	RelistInterval time.Duration
}

// DefaultRelistInterval is the default of [Options.RelistInterval].
const DefaultRelistInterval = time.Second

// Runtime is an embedded agent-tools runtime. Its methods are safe for
// concurrent use.
type Runtime struct {
	rt *runtime.Runtime

	relist time.Duration    // Options.RelistInterval, default applied
	now    func() time.Time // the providers' clock (nil: time.Now); tests move it
}

// ErrNotStarted is returned by methods that need a started runtime.
var ErrNotStarted = errors.New("agenttools: the runtime is not started (call Start)")

// ErrUnknownProvider is returned (wrapped) by SetEnabled for an id that is
// not loaded; match it with errors.Is.
var ErrUnknownProvider = errors.New("unknown provider")

// ErrUnavailable is returned (wrapped, with the reason) by SetEnabled for a
// provider of the config that could not be built, e.g. an unset ${VAR};
// match it with errors.Is.
var ErrUnavailable = errors.New("provider cannot be enabled")

// ConfigError is a configuration the runtime cannot run with: a bad
// option of New, or a config file or value that does not parse or
// validate. Find it with errors.As; Err holds every problem found, each
// with its line and column when it comes from YAML.
type ConfigError struct {
	Err error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// New checks the options and returns a runtime ready for registration.
// It reads nothing and starts nothing.
func New(o Options) (*Runtime, error) {
	ro := runtime.Options{
		ConfigFile: o.ConfigFile, ConfigYAML: o.ConfigYAML, ProjectDir: o.ProjectDir, Mode: o.Mode,
		LookupEnv: o.LookupEnv, Logger: o.Logger, AuditLog: o.AuditLog, DecisionsFile: o.DecisionsFile,
		BuiltIns: o.BuiltIns, Watch: o.Watch, Stdin: o.Stdin, Stdout: o.Stdout,
	}
	if o.TracerProvider != nil {
		ro.Tracer = tracing.NewHook(o.TracerProvider)
	}
	rt, err := runtime.New(ro)
	if err != nil {
		return nil, publicError(err)
	}
	relist := o.RelistInterval
	if relist == 0 {
		relist = DefaultRelistInterval
	}
	return &Runtime{rt: rt, relist: relist}, nil
}

// Start loads the config, builds every provider and starts serving the
// added tools. Tools may still be added afterwards in plugins that exist;
// a new plugin or provider must be added before Start.
func (r *Runtime) Start(ctx context.Context) error {
	return publicError(r.rt.Start(ctx))
}

// Close stops the runtime: every session ends and providers are released
// (an added [Provider] that is a [Closer] is closed).
func (r *Runtime) Close() error { return r.rt.Close() }

// Handler returns the Streamable HTTP endpoint, to mount at /mcp on the
// service's mux: the same transport, guards (Origin, Host, body size, rate
// limit) and auth (server.http tokens and OIDC from the config) as
// `agent-tools serve --http`. Before Start it answers 503.
func (r *Runtime) Handler() http.Handler { return r.rt.Handler() }

// ServeStdio serves MCP over the process's stdin and stdout (or
// Options.Stdin and Stdout) until ctx ends or the client closes its input
// (for CLI agents).
func (r *Runtime) ServeStdio(ctx context.Context) error {
	return publicError(r.rt.ServeStdio(ctx))
}

// SetEnabled turns a plugin or provider on or off at run time: tools/list,
// discover and search change at once and every connected session, over
// HTTP, stdio or in-process, is told notifications/tools/list_changed.
// Calls already running finish; a call that races with a disable gets
// PROVIDER_UNAVAILABLE and never half-runs. The choice survives a config
// reload. An unknown id is ErrUnknownProvider; a provider whose config
// cannot be built (unset ${VAR}s) cannot be enabled, and the error says why.
func (r *Runtime) SetEnabled(ctx context.Context, providerID string, enabled bool) error {
	return publicError(r.rt.SetEnabled(ctx, providerID, enabled))
}

// publicError gives an internal error its public identity: the public
// sentinel or type that errors.Is and errors.As find, with the same text.
func publicError(err error) error {
	if err == nil {
		return nil
	}
	if te, ok := toolerr.As(err); ok {
		return toolError(te)
	}
	var ce *app.ConfigError
	if errors.As(err, &ce) {
		if err == error(ce) {
			return &ConfigError{Err: ce.Err}
		}
		return &also{err: err, public: &ConfigError{Err: ce.Err}}
	}
	for _, m := range []struct{ internal, public error }{
		{runtime.ErrNotStarted, ErrNotStarted},
		{status.ErrUnknownProvider, ErrUnknownProvider},
		{status.ErrUnavailable, ErrUnavailable},
	} {
		if err == m.internal {
			return m.public
		}
		if errors.Is(err, m.internal) {
			return &also{err: err, public: m.public}
		}
	}
	return err
}

// also is an internal error that also matches a public one.
type also struct{ err, public error }

func (e *also) Error() string   { return e.err.Error() }
func (e *also) Unwrap() []error { return []error{e.public, e.err} }
