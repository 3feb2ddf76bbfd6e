package facade

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/passthrough"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Forwarded requests that are no tool calls (passthrough.Op: resource
// reads, prompt fetches, completions, subscriptions, log-level changes) take
// the one call pipeline tool calls take, so nothing reaches an upstream
// unaudited or past a deny rule: audited under
// their canonical name (a resource's URI, a prompt's published name),
// loop-guarded, allowed or denied by the policy's globs. They change nothing
// a confirmation would guard, so they are read-only to the policy.

// gateOp is the passthrough's Gate: do runs as the pipeline's backend.
func (f *Facade) gateOp(ctx context.Context, mreq sdk.Request, op passthrough.Op, do func(context.Context) (any, error)) (any, error) {
	args, err := json.Marshal(op.Params)
	if err != nil || !isObject(args) {
		args = json.RawMessage(`{}`)
	}
	b := &opBackend{do: do}
	req := &pipeline.Request{Via: op.Method, Tool: op.Name, Args: args, Backend: b, Op: true, SessionOp: op.Session,
		Resolved: catalog.Tool{Provider: op.Provider, Name: op.Name, Canonical: op.Name, ReadOnly: true}}
	if _, info, ok := f.cat.Provider(op.Provider); ok && op.Provider != "" {
		req.Info = info // its timeout bounds the request as it bounds its calls
	}
	f.bindOp(mreq, req)
	resp := f.run(ctx, req)
	if b.called {
		if b.err != nil {
			return nil, b.err // the upstream's own answer (a JSON-RPC error keeps its code)
		}
		if resp.Err == nil {
			return b.out, nil
		}
	}
	e := resp.Err
	if e == nil { // not reached: the pipeline answers with a result or an error
		return b.out, nil
	}
	// The pipeline speaks of tools; this was a resource, a prompt...
	msg := strings.Replace(e.Message, "tool "+strconv.Quote(op.Name), opKind(op.Method)+" "+strconv.Quote(op.Name), 1)
	if e.Code == toolerr.UnknownTool { // hidden by the gate: as if it did not exist
		kind := opKind(op.Method)
		if kind == "completion of" || kind == "request" {
			kind = "prompt or resource"
		}
		msg, e.Hint = "no "+kind+" named "+strconv.Quote(text.Clip(op.Name, 200)), "Use one this server lists."
	}
	if e.Code == toolerr.Denied {
		e.Hint = "It is blocked by the runtime's policy; do not retry it. Ask the user."
	}
	data, _ := json.Marshal(e.Body())
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: string(e.Code) + ": " + msg + ". " + e.Hint, Data: data}
}

// opKind names what a forwarded request concerns, for its errors.
func opKind(method string) string {
	switch {
	case strings.HasPrefix(method, "resources/"):
		return "resource"
	case method == "prompts/get":
		return "prompt"
	case method == "completion/complete":
		return "completion of"
	}
	return "request"
}

// bindOp fills what the gate, the audit and the loop guard key on from a
// request that is no tool call (bindSession does it for tools/call).
func (f *Facade) bindOp(mreq sdk.Request, req *pipeline.Request) {
	req.Caller = f.opCaller(mreq)
}

// opCaller is who sent a request that is no tool call, as the gate sees it.
func (f *Facade) opCaller(mreq sdk.Request) policy.Caller {
	c := policy.Caller{Identity: processIdentity, Profile: f.opts.Profile, Door: policy.DoorPassthrough}
	if x := mreq.GetExtra(); x != nil && x.TokenInfo != nil && x.TokenInfo.UserID != "" {
		c.Identity = x.TokenInfo.UserID
		c.Claims = claimsOf(x)
	}
	ss, _ := mreq.GetSession().(*sdk.ServerSession)
	if ss == nil {
		return c
	}
	c.Session = ss.ID()
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
		c.Client = ip.ClientInfo.Name
	}
	return c
}

// seesOp is the passthrough's Sees: the gate's See for the request's
// caller, on a resource, template or prompt as on a tool.
func (f *Facade) seesOp(mreq sdk.Request, provider, name string) bool {
	c := f.opCaller(mreq)
	return f.seesTarget(&c, policy.Target{Kind: policy.OpTarget, Provider: provider, Canonical: name})
}

// opBackend runs one forwarded request as the pipeline's Execute stage.
type opBackend struct {
	do     func(context.Context) (any, error)
	called bool
	out    any
	err    error
}

func (b *opBackend) Info() catalog.ProviderInfo                    { return catalog.ProviderInfo{} }
func (b *opBackend) Tools(context.Context) ([]catalog.Tool, error) { return nil, nil }

func (b *opBackend) Call(ctx context.Context, _ catalog.Tool, _ json.RawMessage) (*provider.Result, error) {
	b.called = true
	b.out, b.err = b.do(ctx)
	if b.err != nil {
		return nil, b.err
	}
	return &provider.Result{}, nil
}
