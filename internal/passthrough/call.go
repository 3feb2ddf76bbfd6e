package passthrough

import (
	"context"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"sync"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// perRequestProtocolKey names the _meta keys a client sends on every
// request under the stateless protocol (SEP-2575): they describe the
// client's own connection to the runtime, not the runtime's session with the
// upstream, which sends its own (the go-sdk keeps keys already present, so
// forwarding them made the upstream see the client's identity and
// capabilities, and refuse calls whose triple came out mixed).
var perRequestProtocolKey = map[string]bool{
	sdk.MetaKeyProtocolVersion: true, sdk.MetaKeyClientInfo: true,
	sdk.MetaKeyClientCapabilities: true, sdk.MetaKeyLogLevel: true,
}

// begin registers a forwarded call and maps its progress token (when
// progress can be relayed: on the client's own upstream session).
func (ds *downstream) begin(ctx context.Context, params *sdk.CallToolParamsRaw, relay bool) *flight {
	fl := &flight{ctx: ctx}
	meta := sdk.Meta{}
	for k, v := range params.Meta {
		if k != "progressToken" && !perRequestProtocolKey[k] {
			meta[k] = v
		}
	}
	if tok := params.GetProgressToken(); tok != nil && relay {
		fl.token = tok
		fl.upToken = fmt.Sprintf("agent-tools-%d", ds.pt.seq.Add(1))
		meta["progressToken"] = fl.upToken
	}
	if len(meta) > 0 {
		fl.meta = meta
	}
	ds.mu.Lock()
	ds.flights = append(ds.flights, fl)
	if fl.upToken != "" {
		ds.progress[fl.upToken] = fl
	}
	ds.mu.Unlock()
	return fl
}

func (ds *downstream) end(fl *flight) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for i, x := range ds.flights {
		if x == fl {
			ds.flights = append(ds.flights[:i], ds.flights[i+1:]...)
			break
		}
	}
	if fl.upToken != "" {
		delete(ds.progress, fl.upToken)
	}
}

// Call runs a flat call of a forwarded provider's tool (canonical name tool)
// on the client's own upstream session, and answers with the upstream's
// result as it is (content of every type, structuredContent, isError,
// _meta); pipeline errors (policy, confirmation, timeout...) keep the
// runtime's envelope. run runs the call through the pipeline under the
// context it is given, and returns the rendered answer and whether the
// pipeline produced a result (rather than an error of its own); the call
// carries fwd (provider.Values.Forward) to the upstream's provider. No
// heartbeat: the upstream's own progress is relayed. ok is false when the
// call is not one of a forwarded provider's tool: the caller runs it as
// usual.
func (pt *Passthrough) Call(ctx context.Context, mreq *sdk.CallToolRequest, tool string,
	run func(ctx context.Context, fwd *provider.Forward) (res *sdk.CallToolResult, produced bool)) (res *sdk.CallToolResult, ok bool) {
	if !pt.forward || mreq == nil || mreq.Session == nil || mreq.Params == nil {
		return nil, false
	}
	t, found := pt.cat.Lookup(tool)
	if !found {
		return nil, false
	}
	r, ok := pt.forwardedRef(t.Provider)
	if !ok {
		return nil, false
	}
	ds := pt.downstream(mreq.Session)
	fl := ds.begin(ctx, mreq.Params, sessionful(mreq.Session))
	defer ds.end(fl)

	var mu sync.Mutex
	var raw *sdk.CallToolResult
	fwd := &provider.Forward{Provider: t.Provider, Meta: fl.meta,
		Session: func(ctx context.Context) (*sdk.ClientSession, error) {
			c, err := ds.conn(ctx, r)
			if err != nil {
				return nil, err
			}
			return c.cs, nil
		},
		Raw: func(res *sdk.CallToolResult) {
			mu.Lock()
			raw = res
			mu.Unlock()
		}}
	rendered, produced := run(ctx, fwd)
	mu.Lock()
	defer mu.Unlock()
	if produced && raw != nil {
		return raw, true
	}
	return rendered, true
}
