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
	// Session: the request sets only this client's own session
	// (logging/setLevel) and names nothing upstream (policy.Target.SessionOp).
	Session bool
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

// Sees is the gate's See for the caller of req: whether the resource URI,
// resource template or prompt name of provider exists for it at all. Every
// list the passthrough answers asks it per item, and a request that names
// an item asks the gate's Call through Gate: one decision, per caller.
type Sees func(req sdk.Request, provider, name string) bool

// sees reports whether the caller of req may see name of provider (all may
// without a Sees).
func (pt *Passthrough) sees(req sdk.Request, provider, name string) bool {
	return pt.seesFn == nil || pt.seesFn(req, provider, name)
}

// published reports whether name may be published on the server at all
// (the global rules): a prompt no caller may see is not registered.
func (pt *Passthrough) published(name string) bool {
	return pt.publish == nil || pt.publish(name)
}

// keep filters items to what the caller of req may see, copying only when
// one is left out.
func keep[T any](pt *Passthrough, req sdk.Request, items []T, provider func(T) string, name func(T) (string, bool)) ([]T, bool) {
	if pt.seesFn == nil {
		return items, false
	}
	var kept []T
	dropped := false
	for i, it := range items {
		n, ok := name(it)
		if !ok || pt.sees(req, provider(it), n) {
			if dropped {
				kept = append(kept, it)
			}
			continue
		}
		if !dropped {
			dropped = true
			kept = append(make([]T, 0, len(items)-1), items[:i]...)
		}
	}
	if !dropped {
		return items, false
	}
	if kept == nil {
		kept = []T{}
	}
	return kept, true
}

// visibleResources leaves the resources the caller may not see out of a list.
func (pt *Passthrough) visibleResources(req sdk.Request, ds *downstream, ups []upstreamRef, res *sdk.ListResourcesResult) *sdk.ListResourcesResult {
	if res == nil {
		return res
	}
	kept, changed := keep(pt, req, res.Resources, func(r *sdk.Resource) string { return ds.ownerIn(ups, r.URI) },
		func(r *sdk.Resource) (string, bool) { return r.URI, r != nil })
	if !changed {
		return res
	}
	c := *res
	c.Resources = kept
	return &c
}

// visibleTemplates leaves the resource templates the caller may not see
// out of a list (matched by their URI template).
func (pt *Passthrough) visibleTemplates(req sdk.Request, ds *downstream, ups []upstreamRef, res *sdk.ListResourceTemplatesResult) *sdk.ListResourceTemplatesResult {
	if res == nil {
		return res
	}
	kept, changed := keep(pt, req, res.ResourceTemplates, func(t *sdk.ResourceTemplate) string { return ds.ownerIn(ups, t.URITemplate) },
		func(t *sdk.ResourceTemplate) (string, bool) { return t.URITemplate, t != nil })
	if !changed {
		return res
	}
	c := *res
	c.ResourceTemplates = kept
	return &c
}

// visiblePrompts leaves the prompts the caller may not see out of a list:
// an upstream's under its provider, the runtime's own under none.
func (pt *Passthrough) visiblePrompts(req sdk.Request, res *sdk.ListPromptsResult) *sdk.ListPromptsResult {
	if res == nil {
		return res
	}
	kept, changed := keep(pt, req, res.Prompts, func(p *sdk.Prompt) string { return pt.promptProvider(p.Name) },
		func(p *sdk.Prompt) (string, bool) { return p.Name, p != nil })
	if !changed {
		return res
	}
	c := *res
	c.Prompts = kept
	return &c
}

// promptProvider is the provider a published prompt comes from ("" for the
// runtime's own).
func (pt *Passthrough) promptProvider(name string) string {
	if o, ok := pt.owner(name); ok {
		return o.ref.id
	}
	return ""
}

// ownerIn is ownerOf, or the one upstream there is: one upstream's items
// are not recorded (there is nothing to route), yet the gate decides by
// provider too.
func (ds *downstream) ownerIn(ups []upstreamRef, uri string) string {
	if o := ds.ownerOf(uri); o != "" {
		return o
	}
	if len(ups) == 1 {
		return ups[0].id
	}
	return ""
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
