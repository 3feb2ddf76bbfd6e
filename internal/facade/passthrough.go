package facade

// Transparent passthrough (SPEC §4.1; issue 4, point 5).
//
// In flat mode, a provider backed by an upstream MCP server whose tools keep
// their bare names (config `prefix: ""`) is forwarded in full: its tools (as
// flat tools, through the pipeline: policy, confirmation, audit, loop guard,
// deadline), its prompts (mirrored, see passthrough_prompts.go), resources
// (list, read, templates/list, subscribe/unsubscribe and the upstream's
// notifications/resources/updated and list_changed), completion/complete,
// logging/setLevel and the upstream's log messages; and the upstream's
// requests to the client (sampling/createMessage, elicitation/create,
// roots/list) and progress notifications are relayed to the client, both
// ways (progress tokens mapped; cancellation follows the contexts).
//
// Session affinity: one upstream session per downstream session and
// passthrough provider. It is opened on the downstream session's first
// forwarded request (not at initialize), with the downstream client's own
// capabilities (sampling, elicitation, roots) and protocol version, and
// closed when the downstream session ends. So everything the upstream keeps
// per session — log level, subscriptions, roots, the requests it sends back —
// belongs to exactly one client, and there is nothing to guess. Inside one
// downstream session, an upstream request or log message (which the wire does
// not tie to a call) is relayed under the most recent call still in flight on
// that session (over Streamable HTTP: on that call's SSE stream), else on the
// session's standalone stream; progress is routed exactly, by token. A
// passthrough session that ends is replaced on the next request, replaying
// the log level and subscriptions. The provider's own shared session still
// keeps the catalog (tool list, cache, list_changed) and serves callers that
// are not MCP sessions (CLI, skills). The cost: over stdio, one extra child
// process per connected client; idle HTTP clients should be bounded with
// the HTTP transport's session timeout.
//
// The SDK has no way to send an arbitrary notification to one session; the
// relays use notifyServerSession, a sending middleware that rewrites a
// marked NotifyProgress into the wanted notification (rewriteSends).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// promptUpstream is a provider backed by an upstream MCP server: the facade
// serves its prompts (provider/mcp implements it).
type promptUpstream interface {
	// Session returns the provider's shared upstream session, starting it if needed.
	Session(ctx context.Context) (*mcp.ClientSession, error)
	// UpstreamPrompts returns the upstream's prompts as last listed; nil when unknown.
	UpstreamPrompts() []*mcp.Prompt
	// UpstreamInit returns the upstream's initialize result (live or cached),
	// starting the upstream under ctx when it is not known; nil when it cannot.
	UpstreamInit(ctx context.Context) *mcp.InitializeResult
}

// passthroughUpstream is a promptUpstream the facade can forward to in full.
type passthroughUpstream interface {
	promptUpstream
	// OpenSession connects a separate session to the same upstream; the
	// caller closes it.
	OpenSession(ctx context.Context, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions, setup func(*mcp.Client)) (*mcp.ClientSession, error)
	// BindCall returns a context under which the provider's Call runs on the
	// session that session returns, with meta as _meta, and hands the
	// upstream's own result to raw.
	BindCall(ctx context.Context, session func(context.Context) (*mcp.ClientSession, error), meta mcp.Meta, raw func(*mcp.CallToolResult)) context.Context
}

// unwrap removes wrappers (skills.Wrap) around a provider.
func unwrap(p provider.Provider) provider.Provider {
	for range 8 {
		w, ok := p.(interface{ Unwrap() provider.Provider })
		if !ok {
			break
		}
		p = w.Unwrap()
	}
	return p
}

// upstreamRef is one provider backed by an upstream MCP server.
type upstreamRef struct {
	id   string
	info catalog.ProviderInfo
	up   promptUpstream
	pt   passthroughUpstream // non-nil: forwarded in full (flat mode, bare names)
}

// upstreams are the enabled providers backed by an upstream MCP server, in
// the registry's order.
func (f *Facade) upstreams() []upstreamRef {
	var out []upstreamRef
	for _, st := range f.visibleProviders() {
		p, info, ok := f.cat.Provider(st.Info.ID)
		if !ok {
			continue
		}
		p = unwrap(p)
		up, ok := p.(promptUpstream)
		if !ok {
			continue
		}
		r := upstreamRef{id: info.ID, info: info, up: up}
		if f.opts.Mode == Flat && info.HostLocal {
			r.pt, _ = p.(passthroughUpstream)
		}
		out = append(out, r)
	}
	return out
}

// forwardedRef returns provider id when it is forwarded in full (cheap: it
// runs for every flat call).
func (f *Facade) forwardedRef(id string) (upstreamRef, bool) {
	if f.opts.Mode != Flat {
		return upstreamRef{}, false
	}
	p, info, ok := f.cat.Provider(id)
	if !ok || !info.HostLocal {
		return upstreamRef{}, false
	}
	pt, ok := unwrap(p).(passthroughUpstream)
	if !ok {
		return upstreamRef{}, false
	}
	return upstreamRef{id: info.ID, info: info, up: pt, pt: pt}, true
}

// forwarded are the upstreams forwarded in full.
func (f *Facade) forwarded() []upstreamRef {
	var out []upstreamRef
	for _, r := range f.upstreams() {
		if r.pt != nil {
			out = append(out, r)
		}
	}
	return out
}

// initWait bounds how long initialize waits to learn an upstream's
// capabilities when neither a live session nor the cache knows them.
const initWait = 5 * time.Second

// passthrough is the facade's forwarding state: one entry per downstream
// session that used a forwarded upstream.
type passthrough struct {
	f   *Facade
	seq atomic.Int64

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*downstream

	// Mirrored upstream prompts (passthrough_prompts.go), guarded by f.mu.
	prompts map[string]string      // published name → fingerprint
	owners  map[string]promptOwner // published name → where it comes from
}

func newPassthrough(f *Facade) *passthrough {
	return &passthrough{f: f, sessions: map[*mcp.ServerSession]*downstream{},
		prompts: map[string]string{}, owners: map[string]promptOwner{}}
}

// downstream is one client session's passthrough state.
type downstream struct {
	pt *passthrough
	ss *mcp.ServerSession

	mu       sync.Mutex
	closed   bool
	conns    map[string]*upConn    // by provider id
	level    mcp.LoggingLevel      // the client's last logging/setLevel
	subs     map[string]string     // subscribed URI → provider id
	owners   map[string]string     // URI or URI template → provider id (learned from lists)
	flights  []*flight             // tool calls in flight, oldest first
	progress map[string]*flight    // upstream progress token → call
	relayed  map[string]relayedTok // progress token given to the client → upstream's
}

// upConn is the upstream session of one downstream session and provider.
type upConn struct {
	id    string
	up    passthroughUpstream // the provider it was opened on (a reload replaces it)
	ready chan struct{}       // closed once cs or err is set
	cs    *mcp.ClientSession
	err   error
	dead  atomic.Bool
}

// flight is a forwarded tool call in flight.
type flight struct {
	ctx     context.Context // the downstream request's (routes relays to its stream)
	token   any             // the client's progress token, if any
	upToken string          // the token the upstream sees
	meta    mcp.Meta        // _meta sent upstream
}

type relayedTok struct {
	conn  *upConn
	token any
}

func (pt *passthrough) downstream(ss *mcp.ServerSession) *downstream {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if ds := pt.sessions[ss]; ds != nil {
		return ds
	}
	ds := &downstream{pt: pt, ss: ss, conns: map[string]*upConn{}, subs: map[string]string{},
		owners: map[string]string{}, progress: map[string]*flight{}, relayed: map[string]relayedTok{}}
	pt.sessions[ss] = ds
	go func() {
		_ = ss.Wait()
		pt.mu.Lock()
		delete(pt.sessions, ss)
		pt.mu.Unlock()
		ds.close()
	}()
	return ds
}

// close ends the downstream session's upstream sessions.
func (ds *downstream) close() {
	ds.mu.Lock()
	ds.closed = true
	conns := ds.conns
	ds.conns = map[string]*upConn{}
	ds.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

func (c *upConn) close() {
	<-c.ready
	if c.cs != nil {
		_ = c.cs.Close()
	}
}

var errSessionEnded = errors.New("the client session has ended")

// newProtocol is the first protocol version without sessions (SEP-2575):
// no server-to-client requests, log levels and subscriptions per request.
const newProtocol = "2026-07-28"

// sessionful reports whether the client speaks a protocol with sessions,
// where the passthrough keeps one upstream session per client.
func sessionful(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion < newProtocol
}

var readyNow = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// conn returns the downstream session's upstream session for r, opening it
// on first use (or after the previous one ended, or a reload replaced the
// provider). A client of the sessionless protocol has nothing to keep per
// session, and gets the provider's shared session.
func (ds *downstream) conn(ctx context.Context, r upstreamRef) (*upConn, error) {
	if !sessionful(ds.ss) {
		cs, err := r.pt.Session(ctx)
		if err != nil {
			return nil, err
		}
		return &upConn{id: r.id, up: r.pt, ready: readyNow, cs: cs}, nil
	}
	ds.mu.Lock()
	if ds.closed {
		ds.mu.Unlock()
		return nil, errSessionEnded
	}
	c := ds.conns[r.id]
	if c == nil || c.up != r.pt || c.dead.Load() {
		if c != nil {
			go c.close()
		}
		c = &upConn{id: r.id, up: r.pt, ready: make(chan struct{})}
		ds.conns[r.id] = c
		go ds.dial(c)
	}
	ds.mu.Unlock()
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		ds.mu.Lock()
		if ds.conns[r.id] == c {
			delete(ds.conns, r.id) // the next request tries again
		}
		ds.mu.Unlock()
		return nil, c.err
	}
	return c, nil
}

// legacyVersion is the protocol a passthrough session speaks upstream when
// the client's is unknown (or newer): it must be one with sessions.
const legacyVersion = "2025-11-25"

// dial opens c's upstream session with the client's capabilities and
// protocol version, then replays the log level and subscriptions.
func (ds *downstream) dial(c *upConn) {
	defer close(c.ready)
	var caps *mcp.ClientCapabilities
	version := ""
	if ip := ds.ss.InitializeParams(); ip != nil {
		caps, version = ip.Capabilities, ip.ProtocolVersion
	}
	if version == "" || version > legacyVersion {
		version = legacyVersion
	}
	ctx := context.Background() // not the request's: other requests may wait for this dial
	cs, err := c.up.OpenSession(ctx, ds.clientOptions(c, caps), &mcp.ClientSessionOptions{ProtocolVersion: version}, func(cl *mcp.Client) {
		cl.AddReceivingMiddleware(ds.clientReceive(c))
		cl.AddSendingMiddleware(rewriteSends)
	})
	if err != nil {
		c.err = err
		return
	}
	c.cs = cs
	go func() {
		_ = cs.Wait()
		c.dead.Store(true)
	}()

	ds.mu.Lock()
	level := ds.level
	var subs []string
	for uri, id := range ds.subs {
		if id == c.id {
			subs = append(subs, uri)
		}
	}
	ds.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, initWait)
	defer cancel()
	uc := upstreamCaps(cs)
	if level != "" && uc.Logging != nil {
		_ = cs.SetLoggingLevel(rctx, &mcp.SetLoggingLevelParams{Level: level})
	}
	for _, uri := range subs {
		_ = cs.Subscribe(rctx, &mcp.SubscribeParams{URI: uri})
	}
}

func upstreamCaps(cs *mcp.ClientSession) *mcp.ServerCapabilities {
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		return ir.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// clientOptions are the upstream session's: the downstream client's
// capabilities, and handlers relaying to it.
func (ds *downstream) clientOptions(c *upConn, caps *mcp.ClientCapabilities) *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			nctx, done := ds.relayCtx(ctx)
			defer done()
			_ = ds.ss.Log(nctx, req.Params) // filtered by the client's own level, as the SDK does
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
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
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			_ = notifyServerSession(context.Background(), ds.ss, "notifications/resources/updated", req.Params)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			_ = notifyServerSession(context.Background(), ds.ss, "notifications/resources/list_changed", &mcp.ResourceListChangedParams{})
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
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
		o.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return ds.createMessage(ctx, c, req.Params)
		}
	}
	if caps.Elicitation != nil {
		o.Capabilities.Elicitation = caps.Elicitation
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return ds.elicit(ctx, c, req.Params)
		}
	}
	return o
}

// clientReceive relays the upstream's requests to the downstream client:
// sampling, elicitation and roots/list.
func (ds *downstream) clientReceive(c *upConn) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "sampling/createMessage":
				p, _ := req.GetParams().(*mcp.CreateMessageWithToolsParams)
				return result(ds.createMessage(ctx, c, p))
			case "elicitation/create":
				p, _ := req.GetParams().(*mcp.ElicitParams)
				return result(ds.elicit(ctx, c, p))
			case "roots/list":
				p, _ := req.GetParams().(*mcp.ListRootsParams)
				rctx, done := ds.relayCtx(ctx)
				defer done()
				return result(ds.ss.ListRoots(rctx, p))
			}
			return next(ctx, method, req)
		}
	}
}

func (ds *downstream) createMessage(ctx context.Context, c *upConn, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	if params == nil {
		params = &mcp.CreateMessageWithToolsParams{}
	}
	rctx, done := ds.relayCtx(ctx)
	defer done()
	p := *params
	var undo func()
	p.Meta, undo = ds.mapToken(c, p.Meta)
	defer undo()
	return ds.ss.CreateMessageWithTools(rctx, &p) // array content kept; one block goes back as one
}

// elicit relays an elicitation as the upstream wrote it. ServerSession.Elicit
// checks the schema the SDK's way (stricter than the spec: it rejects
// SEP-1330's titled multi-select enums, which the client may well accept)
// and validates the answer against it; the upstream does both itself. So
// Elicit is given the schema-less form for its capability checks, and
// rewriteSends puts the upstream's own request on the wire.
func (ds *downstream) elicit(ctx context.Context, c *upConn, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if params == nil {
		params = &mcp.ElicitParams{}
	}
	rctx, done := ds.relayCtx(ctx)
	defer done()
	p := *params
	var undo func()
	p.Meta, undo = ds.mapToken(c, p.Meta)
	defer undo()
	stub := &mcp.ElicitParams{Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	rctx = context.WithValue(rctx, rewriteKey{}, &rewrite{on: "elicitation/create", method: "elicitation/create",
		req: &mcp.ServerRequest[*mcp.ElicitParams]{Session: ds.ss, Params: &p}})
	return ds.ss.Elicit(rctx, stub)
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
func (ds *downstream) mapToken(c *upConn, meta mcp.Meta) (mcp.Meta, func()) {
	tok, ok := meta["progressToken"]
	if !ok || tok == nil {
		return meta, func() {}
	}
	ours := fmt.Sprintf("agent-tools-r%d", ds.pt.seq.Add(1))
	out := make(mcp.Meta, len(meta))
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

// begin registers a forwarded call and maps its progress token (when
// progress can be relayed: on the client's own upstream session).
func (ds *downstream) begin(ctx context.Context, params *mcp.CallToolParamsRaw, relay bool) *flight {
	fl := &flight{ctx: ctx}
	meta := mcp.Meta{}
	for k, v := range params.Meta {
		if k != "progressToken" {
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

// callForwarded runs a flat call of a forwarded provider's tool through the
// pipeline on the client's own upstream session, and answers with the
// upstream's result as it is (content of every type, structuredContent,
// isError, _meta); pipeline errors (policy, confirmation, timeout...) keep
// the runtime's envelope. No heartbeat: the upstream's own progress is
// relayed. ok is false when the call is not one of a forwarded provider's tool.
func (f *Facade) callForwarded(ctx context.Context, mreq *mcp.CallToolRequest, preq *pipeline.Request) (res *mcp.CallToolResult, ok bool) {
	if _, flat := preq.Shape.(flatShape); !flat || f.opts.Mode != Flat || mreq == nil || mreq.Session == nil || mreq.Params == nil {
		return nil, false
	}
	t, found := f.cat.Lookup(preq.Tool)
	if !found {
		return nil, false
	}
	r, ok := f.forwardedRef(t.Provider)
	if !ok {
		return nil, false
	}
	ds := f.pt.downstream(mreq.Session)
	fl := ds.begin(ctx, mreq.Params, sessionful(mreq.Session))
	defer ds.end(fl)

	var mu sync.Mutex
	var raw *mcp.CallToolResult
	ctx = r.pt.BindCall(ctx, func(ctx context.Context) (*mcp.ClientSession, error) {
		c, err := ds.conn(ctx, r)
		if err != nil {
			return nil, err
		}
		return c.cs, nil
	}, fl.meta, func(res *mcp.CallToolResult) {
		mu.Lock()
		raw = res
		mu.Unlock()
	})
	f.bindSession(mreq, preq)
	resp := f.run(ctx, preq)
	mu.Lock()
	defer mu.Unlock()
	if resp.Result != nil && raw != nil {
		return raw, true
	}
	return render(resp), true
}

// receive is the server middleware that forwards what the SDK has no
// handler option for: initialize's capabilities, resources, logging level.
func (pt *passthrough) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize", "server/discover":
			res, err := next(ctx, method, req)
			if err == nil {
				switch r := res.(type) {
				case *mcp.InitializeResult:
					pt.advertise(ctx, &r.Capabilities, &r.Instructions, true)
				case *mcp.DiscoverResult:
					pt.advertise(ctx, &r.Capabilities, &r.Instructions, false)
				}
			}
			return res, err
		case "resources/list", "resources/templates/list", "resources/read", "logging/setLevel":
		default:
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		ups := pt.f.forwarded()
		if ss == nil || len(ups) == 0 {
			return next(ctx, method, req)
		}
		ds := pt.downstream(ss)
		switch p := req.GetParams().(type) {
		case *mcp.ListResourcesParams:
			return result(ds.listResources(ctx, ups, p))
		case *mcp.ListResourceTemplatesParams:
			return result(ds.listTemplates(ctx, ups, p))
		case *mcp.ReadResourceParams:
			return result(ds.read(ctx, ups, p))
		case *mcp.SetLoggingLevelParams:
			ds.setLevel(ctx, p)
		}
		return next(ctx, method, req)
	}
}

// result avoids a typed nil Result next to an error.
func result[R mcp.Result](r R, err error) (mcp.Result, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}

// advertise adds to initialize's (or server/discover's) answer what the
// forwarded upstreams offer (resources, logging, completions; prompts are
// mirrored) and their instructions. Without sessions there are no
// subscriptions nor log levels to forward.
func (pt *passthrough) advertise(ctx context.Context, capsp **mcp.ServerCapabilities, instructions *string, sessions bool) {
	if *capsp == nil {
		*capsp = &mcp.ServerCapabilities{}
	}
	caps := *capsp
	completions := false
	for _, r := range pt.f.forwarded() {
		wctx, cancel := context.WithTimeout(ctx, initWait)
		init := r.pt.UpstreamInit(wctx)
		cancel()
		if init == nil || init.Capabilities == nil {
			continue
		}
		uc := init.Capabilities
		if uc.Resources != nil {
			if caps.Resources == nil {
				caps.Resources = &mcp.ResourceCapabilities{}
			}
			caps.Resources.ListChanged = caps.Resources.ListChanged || uc.Resources.ListChanged
			caps.Resources.Subscribe = caps.Resources.Subscribe || uc.Resources.Subscribe && sessions
		}
		if uc.Logging != nil && sessions {
			caps.Logging = &mcp.LoggingCapabilities{}
		}
		if uc.Prompts != nil && caps.Prompts == nil {
			caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		}
		if uc.Completions != nil {
			completions = true
		}
		if s := strings.TrimSpace(init.Instructions); s != "" {
			*instructions = strings.TrimSpace(*instructions + "\n\n" + s)
		}
	}
	if !completions {
		caps.Completions = nil // the handler is always installed; the capability only when an upstream has it
	}
}

// setLevel records the client's log level and passes it to its open
// upstream sessions (sessions opened later get it when they open).
func (ds *downstream) setLevel(ctx context.Context, p *mcp.SetLoggingLevelParams) {
	ds.mu.Lock()
	ds.level = p.Level
	var open []*upConn
	for _, c := range ds.conns {
		open = append(open, c)
	}
	ds.mu.Unlock()
	for _, c := range open {
		select {
		case <-c.ready:
		default:
			continue // still dialling: it replays the level itself
		}
		if c.cs != nil && !c.dead.Load() && upstreamCaps(c.cs).Logging != nil {
			_ = c.cs.SetLoggingLevel(ctx, p)
		}
	}
}

// openConns returns the client's upstream sessions of the forwarded
// providers whose upstream has the capability has reports. With one
// provider, its failure is the error; with several, a failing one is skipped.
func (ds *downstream) openConns(ctx context.Context, ups []upstreamRef, has func(*mcp.ServerCapabilities) bool) ([]*upConn, error) {
	var out []*upConn
	var firstErr error
	for _, r := range ups {
		c, err := ds.conn(ctx, r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if firstErr == nil {
				firstErr = err
			}
			ds.pt.f.log.Warn("passthrough: upstream unavailable", "provider", r.id, "err", err)
			continue
		}
		if has(upstreamCaps(c.cs)) {
			out = append(out, c)
		}
	}
	if len(out) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func hasResources(c *mcp.ServerCapabilities) bool { return c.Resources != nil }

// A cursor across several upstreams: which one, and its own cursor.
type multiCursor struct {
	I int    `json:"i"`
	C string `json:"c,omitempty"`
}

func encodeCursor(i int, c string) string {
	b, _ := json.Marshal(multiCursor{I: i, C: c})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, n int) (int, string, error) {
	if s == "" {
		return 0, "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var mc multiCursor
	if err == nil {
		err = json.Unmarshal(b, &mc)
	}
	if err != nil || mc.I < 0 || mc.I >= n {
		return 0, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
	}
	return mc.I, mc.C, nil
}

// listAcross pages through several upstreams: one upstream's cursors pass
// through unchanged; across several, the cursor says which one is next.
func listAcross[T any](ctx context.Context, conns []*upConn, cursor string,
	page func(ctx context.Context, c *upConn, cursor string) ([]T, string, error)) ([]T, string, error) {
	out := []T{}
	switch len(conns) {
	case 0:
		return out, "", nil
	case 1:
		items, next, err := page(ctx, conns[0], cursor)
		if items == nil {
			items = out
		}
		return items, next, err
	}
	i, cur, err := decodeCursor(cursor, len(conns))
	if err != nil {
		return nil, "", err
	}
	for ; i < len(conns); i++ {
		items, next, err := page(ctx, conns[i], cur)
		if err != nil {
			return nil, "", err
		}
		out = append(out, items...)
		if next != "" {
			return out, encodeCursor(i, next), nil
		}
		cur = ""
	}
	return out, "", nil
}

func (ds *downstream) own(key, id string, several bool) {
	if !several {
		return
	}
	ds.mu.Lock()
	ds.owners[key] = id
	ds.mu.Unlock()
}

func (ds *downstream) listResources(ctx context.Context, ups []upstreamRef, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	conns, err := ds.openConns(ctx, ups, hasResources)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &mcp.ListResourcesParams{}
	}
	var last *mcp.ListResourcesResult
	items, next, err := listAcross(ctx, conns, p.Cursor, func(ctx context.Context, c *upConn, cursor string) ([]*mcp.Resource, string, error) {
		q := *p
		q.Cursor = cursor
		res, err := c.cs.ListResources(ctx, &q)
		if err != nil {
			return nil, "", err
		}
		for _, r := range res.Resources {
			if r != nil {
				ds.own(r.URI, c.id, len(conns) > 1)
			}
		}
		last = res
		return res.Resources, res.NextCursor, nil
	})
	if err != nil {
		return nil, err
	}
	if len(conns) == 1 && last != nil {
		return last, nil // as the upstream said it (_meta included)
	}
	return &mcp.ListResourcesResult{Resources: items, NextCursor: next}, nil
}

func (ds *downstream) listTemplates(ctx context.Context, ups []upstreamRef, p *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error) {
	conns, err := ds.openConns(ctx, ups, hasResources)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &mcp.ListResourceTemplatesParams{}
	}
	var last *mcp.ListResourceTemplatesResult
	items, next, err := listAcross(ctx, conns, p.Cursor, func(ctx context.Context, c *upConn, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		q := *p
		q.Cursor = cursor
		res, err := c.cs.ListResourceTemplates(ctx, &q)
		if err != nil {
			return nil, "", err
		}
		for _, t := range res.ResourceTemplates {
			if t != nil {
				ds.own(t.URITemplate, c.id, len(conns) > 1)
			}
		}
		last = res
		return res.ResourceTemplates, res.NextCursor, nil
	})
	if err != nil {
		return nil, err
	}
	if len(conns) == 1 && last != nil {
		return last, nil
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: next}, nil
}

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

func (ds *downstream) read(ctx context.Context, ups []upstreamRef, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	var out *mcp.ReadResourceResult
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

// subscribe and unsubscribe are the server's SubscribeHandler and
// UnsubscribeHandler: the subscription lives in the client's own upstream
// session (and is replayed if that session is replaced).
func (pt *passthrough) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	ups := pt.f.forwarded()
	if len(ups) == 0 || req.Session == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this server does not support resource subscriptions"}
	}
	ds := pt.downstream(req.Session)
	uri := req.Params.URI
	return ds.route(ctx, ups, uri, func(c *upConn) error {
		if err := c.cs.Subscribe(ctx, req.Params); err != nil {
			return err
		}
		ds.mu.Lock()
		ds.subs[uri] = c.id
		ds.mu.Unlock()
		return nil
	})
}

func (pt *passthrough) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	ups := pt.f.forwarded()
	if len(ups) == 0 || req.Session == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "this server does not support resource subscriptions"}
	}
	ds := pt.downstream(req.Session)
	uri := req.Params.URI
	err := ds.route(ctx, ups, uri, func(c *upConn) error {
		return c.cs.Unsubscribe(ctx, req.Params)
	})
	if err == nil {
		ds.mu.Lock()
		delete(ds.subs, uri)
		ds.mu.Unlock()
	}
	return err
}

// complete is the server's CompletionHandler: a prompt's argument is
// completed by the upstream that owns the prompt, a resource template's by
// a forwarded upstream; the runtime's own prompts complete to nothing.
func (pt *passthrough) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	ref := req.Params.Ref
	switch ref.Type {
	case "ref/prompt":
		o, ok := pt.owner(ref.Name)
		if !ok {
			if pt.f.localPrompt(ref.Name) {
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
		ups := pt.f.forwarded()
		if len(ups) == 0 || req.Session == nil {
			return empty, nil
		}
		ds := pt.downstream(req.Session)
		conns, err := ds.openConns(ctx, ups, func(c *mcp.ServerCapabilities) bool { return c.Completions != nil })
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

// progress is the server's ProgressNotificationHandler: the client's progress
// on a request relayed from an upstream goes back to that upstream.
func (pt *passthrough) progress(ctx context.Context, req *mcp.ProgressNotificationServerRequest) {
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
func (pt *passthrough) rootsChanged(ctx context.Context, req *mcp.RootsListChangedRequest) {
	if req.Session == nil {
		return
	}
	pt.mu.Lock()
	ds := pt.sessions[req.Session]
	pt.mu.Unlock()
	if ds == nil {
		return
	}
	ds.mu.Lock()
	var open []*upConn
	for _, c := range ds.conns {
		open = append(open, c)
	}
	ds.mu.Unlock()
	for _, c := range open {
		select {
		case <-c.ready:
		default:
			continue // still dialling: it asks for the roots when it needs them
		}
		if c.cs != nil && !c.dead.Load() {
			_ = notifyClientSession(context.WithoutCancel(ctx), c.cs, "notifications/roots/list_changed", &mcp.RootsListChangedParams{})
		}
	}
}

// The SDK sends notifications to one session only through typed methods
// (progress, log messages). notifyServerSession and notifyClientSession mark
// a NotifyProgress call with the notification wanted, and rewriteSends (a
// sending middleware on the facade's server and on passthrough clients)
// sends that instead. elicit uses the same for a request.
type rewriteKey struct{}

// rewrite: the send of method on (on the same session) becomes req's, as method.
type rewrite struct {
	on, method string
	req        mcp.Request
}

func rewriteSends(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if rw, ok := ctx.Value(rewriteKey{}).(*rewrite); ok && method == rw.on && rw.req.GetSession() == req.GetSession() {
			return next(ctx, rw.method, rw.req)
		}
		return next(ctx, method, req)
	}
}

func notifyServerSession(ctx context.Context, ss *mcp.ServerSession, method string, params mcp.Params) error {
	ctx = context.WithValue(ctx, rewriteKey{}, &rewrite{on: "notifications/progress", method: method, req: &mcp.ServerRequest[mcp.Params]{Session: ss, Params: params}})
	return ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{})
}

func notifyClientSession(ctx context.Context, cs *mcp.ClientSession, method string, params mcp.Params) error {
	ctx = context.WithValue(ctx, rewriteKey{}, &rewrite{on: "notifications/progress", method: method, req: &mcp.ClientRequest[mcp.Params]{Session: cs, Params: params}})
	return cs.NotifyProgress(ctx, &mcp.ProgressNotificationParams{})
}
