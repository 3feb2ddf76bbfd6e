// Package provider defines what the runtime needs from a backend, and nothing
// else: concrete kinds live in sub-packages and are wired in one place.
package provider

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"log/slog"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// Provider is a source of tools. Construction has no side effects; optional
// phases (Starter, Closer) are discovered by type assertion.
type Provider interface {
	Info() catalog.ProviderInfo
	// Tools returns the provider's current tools with Provider and Name set;
	// the registry assigns canonical names. It must be cheap when nothing changed.
	Tools(ctx context.Context) ([]catalog.Tool, error)
	// Call runs one tool. A failure of the tool itself is a Result with IsError;
	// a returned error means the call could not be made (mapped to an error code).
	Call(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*Result, error)
}

// Result is what a backend answered, before shaping.
type Result struct {
	// Text is the textual result: the whole answer when Content is nil,
	// else a rendering of Content (images, audio and resources summarised
	// in words) for the text mode, scripts and the audit.
	Text string
	// Content is the answer's content blocks as the backend sent them
	// (text, image, audio, resource link, embedded resource), kept typed
	// end to end: the MCP result a model reads in flat and progressive
	// mode carries them as they are. Nil when Text is the whole answer.
	Content []sdk.Content
	// Structured is optional machine-readable content (becomes structuredContent).
	Structured any
	// IsError marks a failure of the tool itself (non-zero exit, HTTP 4xx/5xx...).
	IsError bool
	// Details are extra fields for the error envelope when IsError is set.
	Details map[string]any
}

// Skiller is implemented by providers that ship skills.
type Skiller interface {
	Skills(ctx context.Context) ([]catalog.Skill, error)
	RunSkill(ctx context.Context, name string, args json.RawMessage, tools ToolCaller) (*Result, error)
}

// ToolCaller lets a skill call tools through the full pipeline.
type ToolCaller interface {
	CallTool(ctx context.Context, canonical string, args json.RawMessage) (*Result, error)
}

// Diagnoser reports per-item load problems (skipped scripts, bad names) for doctor.
type Diagnoser interface {
	Diagnostics() []Diagnostic
}

// Diagnostic is one line of `agent-tools doctor`.
type Diagnostic struct {
	Provider string `json:"provider"`
	Item     string `json:"item"`
	Status   string `json:"status"` // ok | warning | skipped | failed (only failed makes doctor exit 1)
	Reason   string `json:"reason,omitempty"`
}

// CallClassifier is implemented by providers whose tool is read-only for
// some arguments only (a workers run in mode analyze or review): the policy
// then skips confirmation for those calls. A tool marked AlwaysConfirm is
// confirmed whatever this says.
type CallClassifier interface {
	ReadOnlyCall(tool catalog.Tool, args json.RawMessage) bool
}

// ArgumentValidator is implemented by providers whose tools have rules the
// JSON Schema cannot state (a workers run in mode implement needs
// allowed_paths inside the project). The pipeline's validate stage calls it
// after the schema and before policy, so that nobody is asked to confirm a
// call that could never run. A nil error means valid; a *toolerr.Error is
// the call's error as is, anything else becomes INVALID_ARGUMENTS. It must
// be cheap and change nothing.
type ArgumentValidator interface {
	ValidateArguments(tool catalog.Tool, args json.RawMessage) error
}

// HumanApprover is implemented by providers some of whose calls need a
// person's approval whatever the confirm mode (a workers run that supplies
// its own verification commands: programs the runtime would run outside the
// worker's sandbox). The policy then treats the call as under confirm: human:
// only an answer from a person counts, never the agent's flag, a token, a
// remembered decision or a confirmed skill. reason is shown to the person.
type HumanApprover interface {
	NeedsHumanApproval(tool catalog.Tool, args json.RawMessage) (reason string, needed bool)
}

// Starter is implemented by providers with a start phase (connections, processes).
type Starter interface {
	Start(ctx context.Context) error
}

// Closer is implemented by providers that hold resources.
type Closer interface {
	Close() error
}

// Notifier is implemented by providers that report changes on their own (an
// upstream whose tool or prompt list changes): the runtime binds its logger
// and a callback that refreshes the catalog and tells clients list_changed.
type Notifier interface {
	Bind(log *slog.Logger, onChange func())
}

// Unwrapper is implemented by providers that wrap another one (a provider
// with skills attached) so that optional capabilities stay reachable.
type Unwrapper interface {
	Unwrap() Provider
}

// As finds the first provider in p's wrapper chain that implements T, the
// way errors.As walks wrapped errors.
func As[T any](p Provider) (T, bool) {
	for range 16 { // a wrapper chain is short; a cycle must not hang
		if t, ok := p.(T); ok {
			return t, true
		}
		w, ok := p.(Unwrapper)
		if !ok {
			break
		}
		p = w.Unwrap()
	}
	var zero T
	return zero, false
}

// Progress receives real progress of a running call (a worker's events, a
// long REST call): done and total in any unit (total 0 = unknown) and a short
// message. It is safe to call from any goroutine; calls after the tool call
// returned are ignored.
type Progress func(done, total float64, message string)

type progressKey struct{}

// WithProgress returns a context whose calls to [ReportProgress] reach fn.
// The facade installs it when the client asked for progress.
func WithProgress(ctx context.Context, fn Progress) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, fn)
}

// ReportProgress sends progress of the call ctx belongs to, if anyone listens.
// Providers call it from Call; the runtime then stops its generic heartbeat.
func ReportProgress(ctx context.Context, done, total float64, message string) {
	if fn, ok := ctx.Value(progressKey{}).(Progress); ok {
		fn(done, total, message)
	}
}

// Deps is what the runtime hands a provider kind's builder: everything a
// provider may need from its host, nothing it could reach by itself.
type Deps struct {
	// Log is the provider's logger (already scoped to the provider id).
	Log *slog.Logger
	// ProjectDir is the directory the runtime serves.
	ProjectDir string
	// ConfigDir is the directory relative config paths resolved against.
	ConfigDir string
	// CacheDir is where a provider may keep caches (tool lists, documents);
	// "" means the provider's default under os.UserCacheDir().
	CacheDir string
	// Version is the runtime's version (client info sent upstream).
	Version string
	// Env looks up the host environment (nil = os.LookupEnv).
	Env func(string) (string, bool)
	// Logins is the upstream token store (Redis with server.redis, shared by
	// the replicas); nil is the user's file store.
	Logins upstreamauth.WatchStore
	// Secrets resolves the provider's secret references (${keyring:…},
	// ${pass:…}, ...) when it is built (nil: secrets.Default).
	Secrets *secrets.Resolver
	// Status reports the runtime's state (providers, mode, version) for the
	// built-in runtime_status tool; it never includes credentials.
	Status func(ctx context.Context) any
}
