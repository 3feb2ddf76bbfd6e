package provider

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// Values are what a call carries to its provider beside the tool and its
// arguments, set by the door that made the call and handed over by the
// pipeline explicitly, never through the context: a provider that reads
// them implements ValuesCaller; every other provider is called as usual.
type Values struct {
	// Script is the `tools` object an execute_javascript run lends its
	// script (code mode): nil, and the script has no tools.
	Script ScriptHost
	// Forward binds a flat call of a forwarded upstream's tool to the
	// client's own upstream session (the passthrough).
	Forward *Forward
}

// Forward runs one call on a client's own upstream session.
type Forward struct {
	// Provider is the id of the provider the binding is for: only its Call
	// uses it.
	Provider string
	// Session opens (or finds) the client's upstream session; it is called
	// only once the call is past the pipeline's policy.
	Session func(context.Context) (*sdk.ClientSession, error)
	// Meta is the request's _meta as the upstream gets it (a mapped
	// progress token).
	Meta sdk.Meta
	// Raw receives the upstream's result, unchanged, before the usual mapping.
	Raw func(*sdk.CallToolResult)
}

// ValuesCaller is a provider whose calls read Values. A wrapper that
// changes Call implements it too, and passes the values on (CallWith).
type ValuesCaller interface {
	CallValues(ctx context.Context, tool catalog.Tool, args json.RawMessage, v Values) (*Result, error)
}

// CallWith calls p with the values v when p reads them, else as usual.
func CallWith(ctx context.Context, p Provider, tool catalog.Tool, args json.RawMessage, v Values) (*Result, error) {
	if vc, ok := p.(ValuesCaller); ok && (v.Script != nil || v.Forward != nil) {
		return vc.CallValues(ctx, tool, args, v)
	}
	return p.Call(ctx, tool, args)
}

// ScriptHost is what the runtime lends a script's `tools` object: search
// and describe over the tools the caller may see, and calls back through
// the call pipeline (policy, validation, loop guard, confirmation, audit
// with the script's call as parent). The facade makes one for every
// execute_javascript call (Values.Script).
type ScriptHost interface {
	Search(ctx context.Context, query string, limit int) []catalog.Tool
	Describe(ctx context.Context, name string) (catalog.Tool, bool)
	// Call runs one tool call; confirm is nil, true, or a confirm token.
	Call(ctx context.Context, name string, args json.RawMessage, confirm any) (*Result, error)
}
