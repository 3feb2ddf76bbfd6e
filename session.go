package agenttools

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/runtime"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// ConfirmArg is the argument that confirms a call which changes state, as
// in flat mode over MCP: {"agent_tools_confirm": true, ...the tool's own},
// or under policy.confirm: token the token a CONFIRMATION_REQUIRED error
// returned (its Body's retry carries it).
const ConfirmArg = "agent_tools_confirm"

// Approval is a person's answer to a confirmation request.
type Approval int

// The answers a [SessionOptions.Confirm] function gives.
const (
	// Declined: the call does not run (DENIED).
	Declined Approval = iota
	// ApprovedOnce: this call runs.
	ApprovedOnce
	// ApprovedForSession: this tool runs without asking again in this session.
	ApprovedForSession
	// ApprovedAlways: this tool runs without asking again, remembered by
	// the runtime (DecisionsFile) until its definition changes.
	ApprovedAlways
)

// SessionOptions describe an in-process caller (the service's own agent).
type SessionOptions struct {
	// ID scopes the loop guard, the audit and "for this session" decisions
	// (default: a fresh "in-process-N").
	ID string
	// Client names the agent in the audit log (default "in-process").
	Client string
	// User is the person the agent acts for, passed to handlers as CallInfo.User.
	User string
	// Confirm asks the person whether a call that changes state may run
	// (the panel's own dialog); nil means the agent confirms by passing
	// ConfirmArg: true. ApprovedAlways is remembered by the runtime.
	Confirm func(ctx context.Context, message string) (Approval, error)
}

// Session is an in-process caller: the full pipeline (validation, policy,
// confirmation, audit, loop guard) with no HTTP and no JSON-RPC framing.
// It does not depend on the HTTP server running.
type Session struct {
	s *runtime.Session
}

// NewSession opens an in-process session.
func (r *Runtime) NewSession(o SessionOptions) *Session {
	ro := runtime.SessionOptions{ID: o.ID, Client: o.Client, User: o.User}
	if ask := o.Confirm; ask != nil {
		ro.Confirm = func(ctx context.Context, message string) (policy.Approval, error) {
			a, err := ask(ctx, message)
			return policy.Approval(a), err
		}
	}
	return &Session{s: r.rt.NewSession(ro)}
}

// ToolsChanged receives a value after the tool list changed (a provider
// toggled, a config reload): the in-process list_changed. Signals coalesce.
func (s *Session) ToolsChanged() <-chan struct{} { return s.s.ToolsChanged() }

// Close ends the session (its channel is no longer signalled).
func (s *Session) Close() { s.s.Close() }

// ToolInfo is one tool as an in-process agent lists it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Provider    string          `json:"provider"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	ReadOnly    bool            `json:"readOnly"`
}

// Tools lists the tools callable now (enabled providers, not denied by
// policy), sorted by provider then name.
func (s *Session) Tools() ([]ToolInfo, error) {
	ts, err := s.s.Tools()
	if err != nil {
		return nil, publicError(err)
	}
	var out []ToolInfo
	for _, t := range ts {
		out = append(out, ToolInfo{Name: t.Canonical, Provider: t.Provider, Description: t.Description, InputSchema: t.InputSchema, ReadOnly: t.ReadOnly})
	}
	return out, nil
}

// Result is a tool's answer: what [Session.Call] returns, and what a
// [Provider] returns from Call.
type Result struct {
	// Text is what the model reads.
	Text string
	// Structured is the structured content when the tool returned an object.
	Structured any
	// Content is the answer as MCP content blocks (images, audio, resource
	// links, embedded resources, text), kept typed to the model: a handler
	// or a Provider sets it to answer with more than text (Text then says
	// in words what the blocks are, for the text mode and scripts); nil
	// when Text is the whole answer.
	Content []mcp.Content
	// IsError, set by a Provider, marks a failure of the tool itself (the
	// backend answered "no"): the agent reads a BACKEND_ERROR whose output
	// is Text. Session.Call never returns a Result with IsError: the
	// failure is a *ToolError.
	IsError bool
}

// The error codes of a [ToolError]: what the runtime returns, stable, for
// callers to branch on.
const (
	CodeMissingToolName      = "MISSING_TOOL_NAME"
	CodeUnknownTool          = "UNKNOWN_TOOL"
	CodeInvalidArguments     = "INVALID_ARGUMENTS"
	CodeConfirmationRequired = "CONFIRMATION_REQUIRED"
	CodeDenied               = "DENIED"
	CodeTimeout              = "TIMEOUT"
	CodeBackendError         = "BACKEND_ERROR"
	CodeProviderUnavailable  = "PROVIDER_UNAVAILABLE"
	CodeProviderNeedsLogin   = "PROVIDER_NEEDS_LOGIN"
	CodeShuttingDown         = "SHUTTING_DOWN"
	CodeRepeatedFailure      = "REPEATED_FAILURE"
	CodeCancelled            = "CANCELLED"
	CodeUnknownSkill         = "UNKNOWN_SKILL"
	CodeResultBlocked        = "RESULT_BLOCKED"
	CodeRateLimited          = "RATE_LIMITED"
	CodeQuotaExceeded        = "QUOTA_EXCEEDED"
)

// ToolError is a call that failed, as the agent would read it over MCP:
// a code (one of the Code constants), a message and a hint. A handler or a
// [Provider] may return one: it reaches the agent with its code and hint
// as they are, instead of becoming a BACKEND_ERROR.
type ToolError struct {
	Code    string
	Message string
	Hint    string
	// Body is the whole teaching envelope ({"error": {...}}) of an error
	// the runtime returned; in one a handler returns, the fields of
	// Body["error"] besides code, message and hint reach the agent too.
	Body map[string]any
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

func toolError(te *toolerr.Error) *ToolError {
	return &ToolError{Code: string(te.Code), Message: te.Message, Hint: te.Hint, Body: te.Body()}
}

// internal is the envelope a handler's ToolError becomes.
func (e *ToolError) internal() *toolerr.Error {
	te := &toolerr.Error{Code: toolerr.Code(e.Code), Message: e.Message, Hint: e.Hint}
	if inner, ok := e.Body["error"].(map[string]any); ok {
		for k, v := range inner {
			if k != "code" && k != "message" && k != "hint" {
				te.With(k, v)
			}
		}
	}
	return te
}

// Call calls a tool by its canonical name on this session. args is a JSON
// object: json.RawMessage, []byte, or any value that marshals to one. A
// tool failure is a *ToolError.
func (s *Session) Call(ctx context.Context, name string, args any) (*Result, error) {
	raw, err := rawArgs(args)
	if err != nil {
		return nil, err
	}
	res, err := s.s.Call(ctx, name, raw)
	if err != nil {
		return nil, publicError(err)
	}
	return &Result{Text: res.Text, Structured: res.Structured, Content: res.Content}, nil
}

// Call calls a tool on the runtime's default in-process session.
func (r *Runtime) Call(ctx context.Context, name string, args any) (*Result, error) {
	return (&Session{s: r.rt.Default()}).Call(ctx, name, args)
}

func rawArgs(args any) (json.RawMessage, error) {
	switch x := args.(type) {
	case nil:
		return json.RawMessage(`{}`), nil
	case json.RawMessage:
		return x, nil
	case []byte:
		return json.RawMessage(x), nil
	}
	b, err := jsonscan.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("agenttools: encoding the arguments: %w", err)
	}
	return b, nil
}
