package passthrough

import (
	"context"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientOptions are the upstream session's: the downstream client's
// capabilities, and handlers relaying to it.
func (ds *downstream) clientOptions(c *upConn, caps *sdk.ClientCapabilities) *sdk.ClientOptions {
	o := &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		LoggingMessageHandler: func(ctx context.Context, req *sdk.LoggingMessageRequest) {
			nctx, done := ds.relayCtx(ctx)
			defer done()
			_ = ds.ss.Log(nctx, req.Params) // filtered by the client's own level, as the SDK does
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			tok, _ := req.Params.ProgressToken.(string)
			ds.mu.Lock()
			fl := ds.progress[tok]
			ds.mu.Unlock()
			if fl == nil {
				return // not a call of ours in flight (any more)
			}
			p := *req.Params
			p.ProgressToken = fl.token
			_ = ds.ss.NotifyProgress(fl.ctx, &p)
		},
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			_ = notifyServerSession(context.Background(), ds.ss, "notifications/resources/updated", req.Params)
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			_ = notifyServerSession(context.Background(), ds.ss, "notifications/resources/list_changed", &sdk.ResourceListChangedParams{})
		},
		ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
			_ = ds.ss.NotifyElicitationComplete(context.Background(), req.Params)
		},
	}
	if caps == nil {
		return o
	}
	if caps.RootsV2 != nil {
		r := *caps.RootsV2
		o.Capabilities.RootsV2 = &r
	}
	// The requests themselves are relayed by clientReceive, before the SDK's
	// client would check them: the upstream and the client judge them, not
	// the relay. The handlers only serve the SDK's own paths to them.
	if caps.Sampling != nil {
		o.Capabilities.Sampling = caps.Sampling
		o.CreateMessageWithToolsHandler = func(ctx context.Context, req *sdk.CreateMessageWithToolsRequest) (*sdk.CreateMessageWithToolsResult, error) {
			return ds.createMessage(ctx, c, req.Params)
		}
	}
	if caps.Elicitation != nil {
		o.Capabilities.Elicitation = caps.Elicitation
		o.ElicitationHandler = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return ds.elicit(ctx, c, req.Params)
		}
	}
	return o
}

// clientReceive relays the upstream's requests to the downstream client:
// sampling, elicitation and roots/list.
func (ds *downstream) clientReceive(c *upConn) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch method {
			case "sampling/createMessage":
				p, _ := req.GetParams().(*sdk.CreateMessageWithToolsParams)
				return result(ds.createMessage(ctx, c, p))
			case "elicitation/create":
				p, _ := req.GetParams().(*sdk.ElicitParams)
				return result(ds.elicit(ctx, c, p))
			case "roots/list":
				p, _ := req.GetParams().(*sdk.ListRootsParams)
				rctx, done := ds.relayCtx(ctx)
				defer done()
				return result(ds.ss.ListRoots(rctx, p))
			}
			return next(ctx, method, req)
		}
	}
}

func (ds *downstream) createMessage(ctx context.Context, c *upConn, params *sdk.CreateMessageWithToolsParams) (*sdk.CreateMessageWithToolsResult, error) {
	return relayRequest(ctx, ds, c, params, func(p *sdk.CreateMessageWithToolsParams) *sdk.Meta { return &p.Meta },
		ds.ss.CreateMessageWithTools) // array content kept; one block goes back as one
}

// elicit relays an elicitation as the upstream wrote it. ServerSession.Elicit
// checks the schema the SDK's way (stricter than the spec: it rejects
// SEP-1330's titled multi-select enums, which the client may well accept)
// and validates the answer against it; the upstream does both itself. So
// Elicit is given the schema-less form for its capability checks, and
// RewriteSends puts the upstream's own request on the wire.
func (ds *downstream) elicit(ctx context.Context, c *upConn, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return relayRequest(ctx, ds, c, params, func(p *sdk.ElicitParams) *sdk.Meta { return &p.Meta },
		func(rctx context.Context, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
			stub := &sdk.ElicitParams{Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
			rctx = context.WithValue(rctx, rewriteKey{}, &rewrite{on: "elicitation/create", method: "elicitation/create",
				req: &sdk.ServerRequest[*sdk.ElicitParams]{Session: ds.ss, Params: p}})
			return ds.ss.Elicit(rctx, stub)
		})
}

// relayRequest relays a request of the upstream to the client: a copy of
// params (nil: empty) whose progress token is mapped to one of ours (see
// mapToken) for as long as send runs, under relayCtx.
func relayRequest[P any, R any](ctx context.Context, ds *downstream, c *upConn, params *P, meta func(*P) *sdk.Meta,
	send func(context.Context, *P) (R, error)) (R, error) {
	var p P
	if params != nil {
		p = *params
	}
	rctx, done := ds.relayCtx(ctx)
	defer done()
	m := meta(&p)
	var undo func()
	*m, undo = ds.mapToken(c, *m)
	defer undo()
	return send(rctx, &p)
}

// relayCtx is the context to relay something the upstream sent while
// handling up: that of the most recent forwarded call still in flight in
// this downstream session (its values route the message to that call's
// stream), else a background one (the session's standalone stream);
// cancelled when up is (the upstream cancelled its request).
func (ds *downstream) relayCtx(up context.Context) (context.Context, context.CancelFunc) {
	base := context.Background()
	ds.mu.Lock()
	for i := len(ds.flights) - 1; i >= 0; i-- {
		if ds.flights[i].ctx.Err() == nil {
			base = ds.flights[i].ctx
			break
		}
	}
	ds.mu.Unlock()
	ctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(up, cancel)
	return ctx, func() { stop(); cancel() }
}

// mapToken replaces the progress token of a request relayed to the client
// with one of ours, so that the client's progress notifications for it go
// back to the upstream that asked (with its own token).
func (ds *downstream) mapToken(c *upConn, meta sdk.Meta) (sdk.Meta, func()) {
	tok, ok := meta["progressToken"]
	if !ok || tok == nil {
		return meta, func() {}
	}
	ours := fmt.Sprintf("agent-tools-r%d", ds.pt.seq.Add(1))
	out := make(sdk.Meta, len(meta))
	for k, v := range meta {
		out[k] = v
	}
	out["progressToken"] = ours
	ds.mu.Lock()
	ds.relayed[ours] = relayedTok{conn: c, token: tok}
	ds.mu.Unlock()
	return out, func() {
		ds.mu.Lock()
		delete(ds.relayed, ours)
		ds.mu.Unlock()
	}
}

// progress is the server's ProgressNotificationHandler: the client's progress
// on a request relayed from an upstream goes back to that upstream.
func (pt *Passthrough) progress(ctx context.Context, req *sdk.ProgressNotificationServerRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok || req.Session == nil {
		return
	}
	pt.mu.Lock()
	ds := pt.sessions[req.Session]
	pt.mu.Unlock()
	if ds == nil {
		return
	}
	ds.mu.Lock()
	rt, ok := ds.relayed[tok]
	ds.mu.Unlock()
	if !ok || rt.conn.cs == nil {
		return
	}
	p := *req.Params
	p.ProgressToken = rt.token
	_ = rt.conn.cs.NotifyProgress(context.WithoutCancel(ctx), &p)
}

// rootsChanged is the server's RootsListChangedHandler: the client's open
// upstream sessions are told.
func (pt *Passthrough) rootsChanged(ctx context.Context, req *sdk.RootsListChangedRequest) {
	if req.Session == nil {
		return
	}
	pt.mu.Lock()
	ds := pt.sessions[req.Session]
	pt.mu.Unlock()
	if ds == nil {
		return
	}
	for _, c := range ds.live() {
		_ = notifyClientSession(context.WithoutCancel(ctx), c.cs, "notifications/roots/list_changed", &sdk.RootsListChangedParams{})
	}
}

// The SDK sends notifications to one session only through typed methods
// (progress, log messages). notifyServerSession and notifyClientSession mark
// a NotifyProgress call with the notification wanted, and RewriteSends (a
// sending middleware on the facade's server and on passthrough clients)
// sends that instead. elicit uses the same for a request.
type rewriteKey struct{}

// rewrite: the send of method on (on the same session) becomes req's, as method.
type rewrite struct {
	on, method string
	req        sdk.Request
}

func RewriteSends(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if rw, ok := ctx.Value(rewriteKey{}).(*rewrite); ok && method == rw.on && rw.req.GetSession() == req.GetSession() {
			return next(ctx, rw.method, rw.req)
		}
		return next(ctx, method, req)
	}
}

func notifyServerSession(ctx context.Context, ss *sdk.ServerSession, method string, params sdk.Params) error {
	ctx = context.WithValue(ctx, rewriteKey{}, &rewrite{on: "notifications/progress", method: method, req: &sdk.ServerRequest[sdk.Params]{Session: ss, Params: params}})
	return ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{})
}

func notifyClientSession(ctx context.Context, cs *sdk.ClientSession, method string, params sdk.Params) error {
	ctx = context.WithValue(ctx, rewriteKey{}, &rewrite{on: "notifications/progress", method: method, req: &sdk.ClientRequest[sdk.Params]{Session: cs, Params: params}})
	return cs.NotifyProgress(ctx, &sdk.ProgressNotificationParams{})
}
