package passthrough

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// route runs fn on the upstream that owns uri: the only one, the one whose
// list named it, else each in turn until one succeeds.
func (ds *downstream) route(ctx context.Context, ups []upstreamRef, uri string, fn func(c *upConn) error) error {
	conns, err := ds.openConns(ctx, ups, hasResources)
	if err != nil {
		return err
	}
	if len(conns) == 0 {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no upstream offers resources"}
	}
	ds.mu.Lock()
	owner := ds.owners[uri]
	if owner == "" {
		owner = ds.subs[uri]
	}
	ds.mu.Unlock()
	if owner != "" {
		for _, c := range conns {
			if c.id == owner {
				return fn(c)
			}
		}
	}
	var last error
	for _, c := range conns {
		if last = fn(c); last == nil {
			return nil
		}
	}
	return last
}

func (ds *downstream) read(ctx context.Context, ups []upstreamRef, p *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error) {
	var out *sdk.ReadResourceResult
	err := ds.route(ctx, ups, p.URI, func(c *upConn) error {
		res, err := c.cs.ReadResource(ctx, p)
		if err == nil {
			out = res
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// complete is the server's CompletionHandler: a prompt's argument is
// completed by the upstream that owns the prompt, a resource template's by
// a forwarded upstream; the runtime's own prompts complete to nothing.
// Each runs through the call pipeline (gate.go) under the name it
// completes: the prompt's published name or the resource template's URI.
func (pt *Passthrough) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion without a reference"}
	}
	op := Op{Method: "completion/complete", Name: ref.Name, Params: req.Params}
	if ref.Type == "ref/resource" {
		op.Name = ref.URI
		if ups := pt.forwarded(); len(ups) == 1 {
			op.Provider = ups[0].id // the one upstream a template can be completed by
		}
	} else if o, ok := pt.owner(ref.Name); ok {
		op.Provider = o.ref.id
	}
	// The runtime's own prompts complete to nothing, through the gate too:
	// a prompt the caller may not see answers as one that does not exist.
	return gated(ctx, pt, req, op, func(ctx context.Context) (*sdk.CompleteResult, error) { return pt.completeOf(ctx, req) })
}

func (pt *Passthrough) completeOf(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	empty := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
	ref := req.Params.Ref
	switch ref.Type {
	case "ref/prompt":
		o, ok := pt.owner(ref.Name)
		if !ok {
			if pt.localPrompt(ref.Name) {
				return empty, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
		}
		cs, err := pt.promptSession(ctx, req.Session, o)
		if err != nil {
			return nil, err
		}
		if upstreamCaps(cs).Completions == nil {
			return empty, nil
		}
		q := *req.Params
		r2 := *ref
		r2.Name = o.name
		q.Ref = &r2
		return cs.Complete(ctx, &q)
	case "ref/resource":
		ups := pt.forwarded()
		if len(ups) == 0 || req.Session == nil {
			return empty, nil
		}
		ds := pt.downstream(req.Session)
		conns, err := ds.openConns(ctx, ups, func(c *sdk.ServerCapabilities) bool { return c.Completions != nil })
		if err != nil {
			return nil, err
		}
		ds.mu.Lock()
		owner := ds.owners[ref.URI]
		ds.mu.Unlock()
		for _, c := range conns {
			if owner == "" || c.id == owner {
				return c.cs.Complete(ctx, req.Params)
			}
		}
		return empty, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown completion reference type %q", ref.Type)}
}
