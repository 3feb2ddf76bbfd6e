// Package provider defines what the runtime needs from a backend, and nothing
// else: concrete kinds live in sub-packages and are wired in one place.
package provider

import (
	"context"
	"encoding/json"

	"github.com/agent-tools/agent-tools/internal/catalog"
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
	// Text is the textual result the model reads.
	Text string
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

// Starter is implemented by providers with a start phase (connections, processes).
type Starter interface {
	Start(ctx context.Context) error
}

// Closer is implemented by providers that hold resources.
type Closer interface {
	Close() error
}
