package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// SessionOptions describe an in-process caller.
type SessionOptions struct {
	ID      string // default: a fresh "in-process-N"
	Client  string // default "in-process"
	User    string
	Confirm func(ctx context.Context, message string) (policy.Approval, error)
}

// Session is an in-process caller: the full pipeline (validation, policy,
// confirmation, audit, loop guard) with no HTTP and no JSON-RPC framing.
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

// Default is the runtime's own session (Runtime.Call's): never signalled,
// never closed.
func (r *Runtime) Default() *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.def == nil {
		r.def = &Session{r: r, opts: SessionOptions{ID: "in-process", Client: "in-process"}, changed: make(chan struct{}, 1)}
	}
	return r.def
}

// ToolsChanged receives a value after the tool list changed. Signals coalesce.
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

// Tools lists the tools callable now (enabled providers, not denied by
// policy), sorted by provider then name.
func (s *Session) Tools() ([]catalog.Tool, error) {
	a, err := s.r.app()
	if err != nil {
		return nil, err
	}
	p := a.Config().Policy
	rules := policy.Rules{Allow: p.Allow, Deny: p.Deny}
	var out []catalog.Tool
	for _, t := range a.Registry().Tools("") {
		if rules.Visible(t.Canonical) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Call calls a tool by its canonical name. A tool failure is a
// *toolerr.Error; any other error means the call was not made.
func (s *Session) Call(ctx context.Context, name string, args json.RawMessage) (*provider.Result, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("agenttools: session %s is closed", s.opts.ID)
	}
	a, err := s.r.app()
	if err != nil {
		return nil, err
	}
	// The facade's builder: the same confirmation parser (true, or the
	// token under policy.confirm: token) and miss hints as every front door.
	req := a.Facade.Request(facade.Caller{Session: s.opts.ID, Client: s.opts.Client, Door: policy.DoorSession, Via: "in-process", Tool: name,
		Args: args, Shape: inProcessShape{}, AskHuman: s.opts.Confirm})
	ctx = provider.WithCaller(ctx, provider.Caller{Session: s.opts.ID, Client: s.opts.Client, User: s.opts.User})
	resp := a.Call(ctx, req)
	if resp.Err != nil {
		return nil, resp.Err
	}
	if resp.Result == nil {
		return &provider.Result{}, nil
	}
	return resp.Result, nil
}

// inProcessShape renders the retry of a call in the in-process API's terms.
type inProcessShape struct{}

func (inProcessShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || m == nil {
		m = map[string]any{}
	}
	if confirm != nil {
		m[facade.ConfirmArg] = confirm
	}
	return map[string]any{"tool": tool, "arguments": m}
}
