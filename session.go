package agenttools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// ConfirmArg is the argument that confirms a call which changes state, as
// in flat mode over MCP: {"agent_tools_confirm": true, ...the tool's own},
// or under policy.confirm: token the token a CONFIRMATION_REQUIRED error
// returned (its Body's retry carries it).
const ConfirmArg = facade.ConfirmArg

// Approval is a person's answer to a confirmation request.
type Approval = policy.Approval

// The answers a [SessionOptions.Confirm] function gives.
const (
	Declined           = policy.Declined
	ApprovedOnce       = policy.ApprovedOnce
	ApprovedForSession = policy.ApprovedForSession
	ApprovedAlways     = policy.ApprovedAlways
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
	r       *Runtime
	opts    SessionOptions
	changed chan struct{}
	closed  atomic.Bool
}

var sessionSeq atomic.Int64

// NewSession opens an in-process session.
func (r *Runtime) NewSession(o SessionOptions) *Session {
	if o.ID == "" {
		o.ID = fmt.Sprintf("in-process-%d", sessionSeq.Add(1))
	}
	if o.Client == "" {
		o.Client = "in-process"
	}
	s := &Session{r: r, opts: o, changed: make(chan struct{}, 1)}
	r.mu.Lock()
	r.sessions[s] = struct{}{}
	r.mu.Unlock()
	return s
}

// ToolsChanged receives a value after the tool list changed (a provider
// toggled, a config reload): the in-process list_changed. Signals coalesce.
func (s *Session) ToolsChanged() <-chan struct{} { return s.changed }

func (s *Session) signal() {
	select {
	case s.changed <- struct{}{}:
	default: // one pending signal is enough
	}
}

// Close ends the session (its channel is no longer signalled).
func (s *Session) Close() {
	if s.closed.Swap(true) {
		return
	}
	s.r.mu.Lock()
	delete(s.r.sessions, s)
	s.r.mu.Unlock()
}

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
	a, err := s.r.app()
	if err != nil {
		return nil, err
	}
	p := a.Config().Policy
	rules := policy.Rules{Allow: p.Allow, Deny: p.Deny}
	var out []ToolInfo
	for _, t := range a.Registry().Tools("") {
		if rules.Visible(t.Canonical) {
			out = append(out, ToolInfo{Name: t.Canonical, Provider: t.Provider, Description: t.Description, InputSchema: t.InputSchema, ReadOnly: t.ReadOnly})
		}
	}
	return out, nil
}

// Result is a successful call's answer.
type Result struct {
	// Text is what the model reads.
	Text string
	// Structured is the structured content when the tool returned an object.
	Structured any
}

// ToolError is a call that failed, as the agent would read it over MCP:
// a code (UNKNOWN_TOOL, INVALID_ARGUMENTS, CONFIRMATION_REQUIRED, DENIED,
// PROVIDER_UNAVAILABLE, TIMEOUT, BACKEND_ERROR, ...), a message and a hint.
type ToolError struct {
	Code    string
	Message string
	Hint    string
	// Body is the whole teaching envelope ({"error": {...}}).
	Body map[string]any
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

// Call calls a tool by its canonical name on this session. args is a JSON
// object: json.RawMessage, []byte, or any value that marshals to one. A
// tool failure is a *ToolError.
func (s *Session) Call(ctx context.Context, name string, args any) (*Result, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("agenttools: session %s is closed", s.opts.ID)
	}
	a, err := s.r.app()
	if err != nil {
		return nil, err
	}
	raw, err := rawArgs(args)
	if err != nil {
		return nil, err
	}
	// The facade's builder: the same confirmation parser (true, or the
	// token under policy.confirm: token) and miss hints as every front door.
	req := a.Facade.Request(facade.Caller{Session: s.opts.ID, Client: s.opts.Client, Via: "in-process", Tool: name,
		Args: raw, Shape: inProcessShape{}, AskHuman: s.opts.Confirm})
	ctx = provider.WithCaller(ctx, provider.Caller{Session: s.opts.ID, Client: s.opts.Client, User: s.opts.User})
	resp := a.Call(ctx, req)
	if resp.Err != nil {
		return nil, &ToolError{Code: string(resp.Err.Code), Message: resp.Err.Message, Hint: resp.Err.Hint, Body: resp.Err.Body()}
	}
	res := &Result{}
	if resp.Result != nil {
		res.Text, res.Structured = resp.Result.Text, resp.Result.Structured
	}
	return res, nil
}

// Call calls a tool on the runtime's default in-process session.
func (r *Runtime) Call(ctx context.Context, name string, args any) (*Result, error) {
	r.mu.Lock()
	if r.def == nil {
		r.def = &Session{r: r, opts: SessionOptions{ID: "in-process", Client: "in-process"}, changed: make(chan struct{}, 1)}
	}
	s := r.def
	r.mu.Unlock()
	return s.Call(ctx, name, args)
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

// inProcessShape renders the retry of a call in the in-process API's terms.
type inProcessShape struct{}

func (inProcessShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || m == nil {
		m = map[string]any{}
	}
	if confirm != nil {
		m[ConfirmArg] = confirm
	}
	return map[string]any{"tool": tool, "arguments": m}
}
