package mcp

// What the transparent passthrough (internal/passthrough)
// needs beyond tools: the upstream's prompts and initialize result (kept with
// the tool list, live or from the disk cache), separate sessions to the same
// upstream (one per downstream client session, so that the upstream's
// requests, notifications, log level and subscriptions belong to exactly one
// client), and a way to run a tool call through the pipeline on such a
// session while keeping the upstream's own result. The passthrough finds
// these methods by type assertion; its tests hold the compile-time guard
// (this package sits below it and does not import it).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

var _ provider.ValuesCaller = (*Provider)(nil)

// sharedClientOfPassthrough makes the shared session of a provider with bare
// names (a passthrough in flat mode) declare what passthrough sessions relay
// — sampling, elicitation, roots — because some servers list the tools that
// use them only to clients that declare them, and the catalog comes from
// this session. Used on this session itself (the CLI, skills: there is no
// client to ask), those requests fail with a clear error, and the roots
// are none.
func sharedClientOfPassthrough(co *sdk.ClientOptions) {
	noClient := &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "agent-tools: this call has no MCP client session to relay the request to (call the tool from an MCP client)"}
	co.Capabilities = &sdk.ClientCapabilities{
		Sampling:    &sdk.SamplingCapabilities{},
		Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}},
		RootsV2:     &sdk.RootCapabilities{},
	}
	co.CreateMessageHandler = func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
		return nil, noClient
	}
	co.ElicitationHandler = func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return nil, noClient
	}
}

// maxPromptPages bounds prompts/list pagination.
const maxPromptPages = 20

// listPromptsOf lists the upstream's prompts when it has the capability. A
// failure is recorded as a protocol problem and yields nil (unknown): prompts
// are an extra, never a reason to fail a start.
func (p *Provider) listPromptsOf(ctx context.Context, s *session) []*sdk.Prompt {
	init := s.cs.InitializeResult()
	if init == nil || init.Capabilities == nil || init.Capabilities.Prompts == nil {
		return []*sdk.Prompt{}
	}
	out := []*sdk.Prompt{}
	params := &sdk.ListPromptsParams{}
	for page := 0; ; page++ {
		if page == maxPromptPages {
			p.problem("prompts/list still paginating after %d pages; keeping the first ones", maxPromptPages)
			return out
		}
		res, err := s.cs.ListPrompts(ctx, params)
		if err != nil {
			if s.ctx.Err() == nil {
				p.problem("prompts/list failed: %v", err)
			}
			return nil
		}
		for _, pr := range res.Prompts {
			if pr != nil && pr.Name != "" {
				out = append(out, pr)
			}
		}
		if res.NextCursor == "" {
			return out
		}
		params = &sdk.ListPromptsParams{Cursor: res.NextCursor}
	}
}

// setUpstreamLocked records the upstream's initialize result and prompts
// (nil prompts: unknown, keep the last) and reports whether the prompts changed.
func (p *Provider) setUpstreamLocked(init *sdk.InitializeResult, prompts []*sdk.Prompt) bool {
	if init != nil {
		p.init = init
	}
	if prompts == nil || reflect.DeepEqual(prompts, p.prompts) {
		return false
	}
	p.prompts = prompts
	return true
}

// UpstreamPrompts returns the upstream's prompts as last listed (live, or
// from the cache); nil when they are not known yet. It never starts the
// upstream: prompts appear, with the runtime told through OnChange, once it
// runs.
func (p *Provider) UpstreamPrompts() []*sdk.Prompt {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readCacheLocked()
	return p.prompts
}

// UpstreamInit returns the upstream's initialize result (capabilities,
// instructions): the live session's, else the cached one; with neither it
// starts the upstream and waits for it under ctx. Nil when it cannot be had.
func (p *Provider) UpstreamInit(ctx context.Context) *sdk.InitializeResult {
	p.mu.Lock()
	p.readCacheLocked()
	init := p.init
	p.mu.Unlock()
	if init != nil {
		return init
	}
	if _, err := p.session(ctx); err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.init
}

// OpenSession connects a separate session to the same upstream, with the
// provider's transport, environment and bounds but the caller's client and
// session options (handlers and capabilities relayed from a downstream
// client, the protocol version it speaks); setup, when set, adds middleware
// to the client before it connects. The
// caller owns the session: closing it ends it and stops its process. It is
// not restarted; Close of the provider ends it too. While the provider's
// own session is failing and waiting out its backoff, OpenSession fails
// fast with PROVIDER_UNAVAILABLE.
func (p *Provider) OpenSession(ctx context.Context, opts *sdk.ClientOptions, sopts *sdk.ClientSessionOptions, setup func(*sdk.Client)) (*sdk.ClientSession, error) {
	p.mu.Lock()
	switch {
	case p.state == stateClosed:
		p.mu.Unlock()
		return nil, errClosed(p.opts.ID)
	case p.state == stateFailed && p.failures > 0 && p.nextTry.After(time.Now()):
		err := p.unavailableLocked()
		p.mu.Unlock()
		return nil, err
	}
	p.mu.Unlock()

	o := sdk.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = p.log
	}
	if o.Capabilities == nil {
		o.Capabilities = &sdk.ClientCapabilities{}
	}
	client := sdk.NewClient(p.clientImpl(), &o)
	if setup != nil {
		setup(client)
	}
	sctx, cancel := context.WithTimeout(ctx, p.opts.StartTimeout)
	defer cancel()
	s := newSession()
	s.copts = sopts
	s.notes = newNoteOrder()
	client.AddReceivingMiddleware(s.staleOnListChanged) // live.go: the next call re-lists
	client.AddReceivingMiddleware(s.notes.middleware)   // outermost: after the caller's handling
	if err := p.dialWith(sctx, client, s); err != nil {
		return nil, toolerr.New(toolerr.ProviderUnavailable, "Retry once; if it fails again, tell the user (agent-tools doctor shows why).",
			"provider %q: connecting a passthrough session failed: %v", p.opts.ID, err)
	}
	p.mu.Lock()
	if p.state == stateClosed {
		p.mu.Unlock()
		s.end(errClosed(p.opts.ID), p.opts.StopGrace)
		return nil, errClosed(p.opts.ID)
	}
	if p.open == nil {
		p.open = map[*sdk.ClientSession]*session{}
	}
	p.open[s.cs] = s
	p.mu.Unlock()
	p.log.Debug("passthrough session opened", "transport", s.transport)

	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		cause := s.wait() // the caller closed it, the upstream ended, or the provider closed
		p.mu.Lock()
		delete(p.open, s.cs)
		p.mu.Unlock()
		s.end(cause, p.opts.StopGrace)
	}()
	return s.cs, nil
}

// openSession is the live passthrough session behind cs.
func (p *Provider) openSession(cs *sdk.ClientSession) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.open[cs]; ok && s.ctx.Err() == nil {
		return s, nil
	}
	if p.sess != nil && p.sess.cs == cs { // a client of the sessionless protocol is served by the shared session
		return p.sess, nil
	}
	if p.state == stateClosed {
		return nil, errClosed(p.opts.ID)
	}
	return nil, toolerr.New(toolerr.ProviderUnavailable, "Retry: a new upstream session is opened for the next call.",
		"provider %q: the passthrough session to the upstream has ended", p.opts.ID)
}

// boundSession opens (or finds) the passthrough session of a bound call.
func (p *Provider) boundSession(ctx context.Context, b *provider.Forward) (*session, error) {
	cs, err := b.Session(ctx)
	if err != nil {
		if _, ok := toolerr.As(err); ok || ctx.Err() != nil {
			return nil, err
		}
		return nil, toolerr.New(toolerr.ProviderUnavailable, "Retry once; if it fails again, tell the user (agent-tools doctor shows why).",
			"provider %q: %v", p.opts.ID, err)
	}
	return p.openSession(cs)
}

// Notifications before the answer. The SDK hands an answer to its caller as
// soon as its reading goroutine reads it, but queues notifications for a
// handler goroutine (go-sdk internal/jsonrpc2 handleAsync: one at a time, in
// the order read, each finished before the next starts): a log message or
// progress notification the upstream sent just before its result could be
// relayed after the client got the result (over Streamable HTTP, after the
// request's stream closed: lost). So a bound call, once it has its answer,
// waits until the notifications read before it have been handled, however
// long their handlers take (bounded by the call's context, which ends with
// the session too).
//
// It cannot count them: a notification read is not always handled (the SDK
// preempts notifications/cancelled, drops methods it does not know and
// params it cannot decode, all before any middleware), so a count of those
// read never reaches the count of those handled and a wait for it would only
// end with a timer, one that a slow handler on a loaded machine outlasts. It
// sends a marker down the same queue instead: the transport puts a barrier
// (a progress notification with a token of ours) into the stream after the
// notifications (over stdio, before the answer that follows them; over
// Streamable HTTP, after each notification event of the call's own POST
// stream, the answer's stream); the client's outermost middleware
// takes it off (no handler sees it) and marks it reached. The queue runs in
// order, so once the barrier is reached every notification before it has
// been handled or dropped. stdioConn and sseNotes insert them.
type noteOrder struct {
	token string // the barriers' progress token prefix: random, not one an upstream can send
	seq   atomic.Int64

	mu      sync.Mutex
	waiting map[int64]chan struct{} // barriers sent down the queue, not reached yet
	latest  <-chan struct{}         // stdio: the barrier read before the latest answer (nil: none yet)
}

func newNoteOrder() *noteOrder {
	return &noteOrder{token: "agent-tools-barrier-" + rand.Text() + "-", waiting: map[int64]chan struct{}{}}
}

// isNote reports whether a message read is a notification.
func isNote(req *jsonrpc.Request) bool {
	return !req.IsCall() && strings.HasPrefix(req.Method, "notifications/")
}

// barrier makes a new barrier and the channel closed when it is reached.
func (n *noteOrder) barrier() (*jsonrpc.Request, int64, <-chan struct{}) {
	id := n.seq.Add(1)
	ch := make(chan struct{})
	n.mu.Lock()
	n.waiting[id] = ch
	n.mu.Unlock()
	params, _ := json.Marshal(sdk.ProgressNotificationParams{ProgressToken: n.token + strconv.FormatInt(id, 10)}) // cannot fail
	return &jsonrpc.Request{Method: "notifications/progress", Params: params}, id, ch
}

// beforeAnswer records ch as the barrier read before the latest answer (stdio).
func (n *noteOrder) beforeAnswer(ch <-chan struct{}) {
	n.mu.Lock()
	n.latest = ch
	n.mu.Unlock()
}

// forget drops barriers that will never be reached (their stream ended).
func (n *noteOrder) forget(ids []int64) {
	n.mu.Lock()
	for _, id := range ids {
		delete(n.waiting, id)
	}
	n.mu.Unlock()
}

func (n *noteOrder) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "notifications/progress" {
			if p, ok := req.GetParams().(*sdk.ProgressNotificationParams); ok {
				if tok, ok := p.ProgressToken.(string); ok && strings.HasPrefix(tok, n.token) {
					id, _ := strconv.ParseInt(tok[len(n.token):], 10, 64)
					n.mu.Lock()
					if ch, ok := n.waiting[id]; ok {
						delete(n.waiting, id)
						close(ch)
					}
					n.mu.Unlock()
					return nil, nil // ours: not relayed
				}
			}
		}
		return next(ctx, method, req)
	}
}

// noteWait is one bound call's: the barrier its Streamable HTTP stream
// carried last before the answer (sseNotes sets it).
type noteWait struct {
	mu   sync.Mutex
	ids  []int64
	last <-chan struct{}
}

type noteWaitKey struct{}

func (w *noteWait) add(id int64, ch <-chan struct{}) {
	w.mu.Lock()
	w.ids = append(w.ids, id)
	w.last = ch
	w.mu.Unlock()
}

// noteWaitOf is the noteWait a request's context carries (nil: none).
func noteWaitOf(ctx context.Context) *noteWait {
	w, _ := ctx.Value(noteWaitKey{}).(*noteWait)
	return w
}

// drain waits (until ctx ends) until every notification read before the
// call's answer has been handled: until the barrier read last before it is
// reached — the one of the call's own HTTP stream (w), else, over stdio,
// the one before the latest answer read.
func (n *noteOrder) drain(ctx context.Context, w *noteWait) {
	w.mu.Lock()
	ch, ids := w.last, w.ids
	w.mu.Unlock()
	if ids != nil {
		defer n.forget(ids) // those the SDK never read (the call ended before its answer)
	}
	if ch == nil {
		n.mu.Lock()
		ch = n.latest
		n.mu.Unlock()
	}
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// sseNotes passes a call's Streamable HTTP event stream to the SDK with a
// barrier event after each notification event, up to the answer.
type sseNotes struct {
	io.ReadCloser
	notes *noteOrder
	wait  *noteWait
	line  []byte
	data  []byte
	done  bool   // the answer went by: the SDK reads no further
	out   []byte // a barrier event to hand out next
	in    []byte // bytes read, not handed out (after a barrier)
	err   error  // the read error to give once in is handed out
}

func (s *sseNotes) Read(b []byte) (int, error) {
	if len(s.out) > 0 {
		n := copy(b, s.out)
		s.out = s.out[n:]
		return n, nil
	}
	var n int
	var err error
	if len(s.in) > 0 {
		n = copy(b, s.in)
		s.in = s.in[n:]
	} else {
		if s.err != nil {
			return 0, s.err
		}
		n, err = s.ReadCloser.Read(b)
	}
	for i, c := range b[:n] {
		if !s.scan(c) {
			continue
		}
		req, id, ch := s.notes.barrier()
		s.wait.add(id, ch)
		data, _ := jsonrpc.EncodeMessage(req) // cannot fail
		s.out = append(append([]byte("data: "), data...), "\n\n"...)
		s.in = append(bytes.Clone(b[i+1:n]), s.in...)
		s.err = err
		return i + 1, nil
	}
	return n, err
}

// scan takes one byte of the stream and reports whether it ended a
// notification event (one to put a barrier after).
func (s *sseNotes) scan(c byte) bool {
	if c != '\n' {
		if len(s.line) < 1<<16 { // longer lines are cut: such a notification is not waited for
			s.line = append(s.line, c)
		}
		return false
	}
	line := strings.TrimSuffix(string(s.line), "\r")
	s.line = s.line[:0]
	switch {
	case line == "":
		return s.event()
	case strings.HasPrefix(line, "data:"):
		s.data = append(s.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
	}
	return false
}

// event looks at a finished event's data.
func (s *sseNotes) event() bool {
	data := s.data
	s.data = s.data[:0]
	if len(data) == 0 || s.done {
		return false
	}
	if bytes.Contains(data, []byte(`"method"`)) { // else not a request: not decoded twice (answers can be large)
		if msg, err := jsonrpc.DecodeMessage(data); err == nil {
			if req, ok := msg.(*jsonrpc.Request); ok {
				return isNote(req)
			}
		}
	}
	// The answer (or what the SDK fails the stream on, or a line cut): the
	// SDK delivers nothing after it, so no barrier follows, none that a
	// wait could never see reached.
	s.done = true
	return false
}
