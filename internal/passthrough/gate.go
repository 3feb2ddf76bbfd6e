package passthrough

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// Op is a forwarded request that is no tool call: a resource read, a prompt
// fetch, a completion, a subscription, a log-level change. Like a tool
// call, it runs through the runtime's call pipeline (Options.Gate): audited,
// loop-guarded, allowed or denied by its canonical name, and its answer
// scrubbed of the secrets the runtime knows.
type Op struct {
	Method string // the MCP method, e.g. "resources/read"
	// Name is the canonical name the policy's allow/deny globs match: a
	// resource's URI, a prompt's published name; the method itself for
	// logging/setLevel.
	Name     string
	Provider string // the provider that answers ("" when any forwarded one may)
	Params   any    // the request's parameters (the audit keeps their hash)
}

// Gate runs do for op on behalf of the client's request req through the
// runtime's call pipeline and returns do's answer, or the pipeline's
// refusal (a denied name, a repeated failure) as a JSON-RPC error. do's own
// error is returned as it is.
type Gate func(ctx context.Context, req sdk.Request, op Op, do func(context.Context) (any, error)) (any, error)

// gated runs do as op through the gate (as is without one) and scrubs its
// answer of the secrets the runtime knows: an upstream's resource or prompt
// may quote what it was configured with.
func gated[R any](ctx context.Context, pt *Passthrough, req sdk.Request, op Op, do func(context.Context) (R, error)) (R, error) {
	var zero R
	var out any
	var err error
	if op.Name == "" {
		op.Name = op.Method // nothing named (a malformed request): audited under its method
	}
	if pt.gate == nil {
		out, err = do(ctx)
	} else {
		out, err = pt.gate(ctx, req, op, func(ctx context.Context) (any, error) { return do(ctx) })
	}
	if err != nil {
		return zero, err
	}
	r, ok := redact.Default.JSONInto(out).(R)
	if !ok {
		return zero, nil
	}
	return r, nil
}

// visible reports whether policy lets clients see name (a resource URI or
// a prompt's published name); denied ones are left out of lists, as denied
// tools are.
func (pt *Passthrough) visible(name string) bool {
	return pt.isVisible == nil || pt.isVisible(name)
}

// visibleResources leaves the resources policy denies out of a list.
func (pt *Passthrough) visibleResources(res *sdk.ListResourcesResult) *sdk.ListResourcesResult {
	if pt.isVisible == nil || res == nil {
		return res
	}
	kept := res.Resources[:0:0]
	for _, r := range res.Resources {
		if r == nil || pt.visible(r.URI) {
			kept = append(kept, r)
		}
	}
	if len(kept) == len(res.Resources) {
		return res
	}
	c := *res
	c.Resources = kept
	return &c
}

// visibleTemplates leaves the resource templates policy denies out of a
// list (matched by their URI template).
func (pt *Passthrough) visibleTemplates(res *sdk.ListResourceTemplatesResult) *sdk.ListResourceTemplatesResult {
	if pt.isVisible == nil || res == nil {
		return res
	}
	kept := res.ResourceTemplates[:0:0]
	for _, t := range res.ResourceTemplates {
		if t == nil || pt.visible(t.URITemplate) {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(res.ResourceTemplates) {
		return res
	}
	c := *res
	c.ResourceTemplates = kept
	return &c
}

// ownerOf is the provider that listed or subscribed uri on this session
// ("" when not known yet).
func (ds *downstream) ownerOf(uri string) string {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if o := ds.owners[uri]; o != "" {
		return o
	}
	return ds.subs[uri]
}
