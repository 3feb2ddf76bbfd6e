package builtin

import (
	"encoding/json"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
)

// Code-mode defaults (docs/modes.md, "Code mode").
const (
	DefaultCodeMaxCalls    = 50
	DefaultCodeConcurrency = 4
	DefaultCodeTimeout     = codemode.DefaultTimeout
	// DefaultCodeSearchLimit is how many hits tools.search returns by default.
	DefaultCodeSearchLimit = 5
	// MaxCodeSearchLimit bounds tools.search's limit.
	MaxCodeSearchLimit = 20
	// MaxCodeSearchQuery bounds a tools.search query (characters).
	MaxCodeSearchQuery = 2000
)

// CodeOptions bound the tool calls of one execute_javascript script.
type CodeOptions struct {
	// MaxCalls bounds tools.call per script (0: DefaultCodeMaxCalls).
	MaxCalls int
	// Concurrency bounds the tool calls in flight at once, as Promise.all
	// starts them (0: DefaultCodeConcurrency).
	Concurrency int
	// AllowMutations lets scripts call tools that change state (they still
	// need confirmation as any call does). False: such a call throws DENIED
	// inside the script.
	AllowMutations bool
	// Timeout is a script's wall time when the call sets no timeout_ms,
	// and the most timeout_ms may ask for (0: DefaultCodeTimeout; tool
	// calls count).
	Timeout time.Duration
	// Memory bounds a script's process in bytes (0: jsrun.DefaultMemory).
	Memory int64
	// CPU bounds a script's processor time (0: jsrun.DefaultCPU).
	CPU time.Duration
	// MaxConcurrent bounds the scripts running at once in sum, whoever
	// asks (0: jsrun.DefaultTotal()); MaxPerIdentity bounds one caller
	// identity's (0: jsrun.DefaultPerIdentity). A script over either waits
	// up to QueueWait for a slot (0: jsrun.DefaultWait; negative: not at
	// all), then is refused with retry_after_ms. Build applies them to
	// the process's slots (jsrun.ServerSlots); New without Options.Slots
	// makes the provider its own.
	MaxConcurrent, MaxPerIdentity int
	QueueWait                     time.Duration
}

func (o CodeOptions) withDefaults() CodeOptions {
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultCodeMaxCalls
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultCodeConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultCodeTimeout
	}
	if o.Memory <= 0 {
		o.Memory = jsrun.DefaultMemory
	}
	if o.CPU <= 0 {
		o.CPU = jsrun.DefaultCPU
	}
	return o
}

// caps are the script slots' caps.
func (o CodeOptions) caps() jsrun.Caps {
	return jsrun.Caps{Total: o.MaxConcurrent, PerIdentity: o.MaxPerIdentity, Wait: o.QueueWait}
}

// ToolInfo is what tools.search and tools.describe tell a script of a tool.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Signature   string          `json:"signature"`
	ReadOnly    bool            `json:"readOnly"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Info describes t for a script; withSchema adds its input schema.
func Info(t catalog.Tool, withSchema bool) ToolInfo {
	i := ToolInfo{Name: t.Canonical, Description: t.Description, ReadOnly: t.ReadOnly,
		Signature: codemode.Signature(t.Canonical, t.InputSchema, t.OutputSchema)}
	if withSchema {
		i.InputSchema = t.InputSchema
	}
	return i
}

// ScriptHost is the `tools` object a script is lent (provider.Values.Script).
type ScriptHost = provider.ScriptHost

// CodeAPI documents the `tools` object for tool descriptions and help.
const CodeAPI = codemode.API
