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
	"io"
	"reflect"
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
	s.notes = newNoteCounter()
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

// maxDrain bounds how long a passthrough call's answer waits for the
// notifications read before it to be handled.
const maxDrain = time.Second

// noteCounter orders a passthrough session's notifications before the
// answers that follow them. The SDK hands an answer to its caller as soon as
// it is read, but queues notifications for a handler goroutine: a log
// message or progress notification the upstream sent just before its result
// could be relayed after the client got the result (over Streamable HTTP,
// after the request's stream closed: lost). So the transport counts the
// notifications it reads (stdioConn, sseNotes), the client's outermost
// middleware those it finished handling, and a bound call waits for the
// second to reach the first before it returns.
type noteCounter struct {
	read atomic.Int64

	mu      sync.Mutex
	handled int64
	changed chan struct{}
}

func newNoteCounter() *noteCounter { return &noteCounter{changed: make(chan struct{})} }

// readOne counts a message the transport read, if it is a notification.
func (n *noteCounter) readOne(req *jsonrpc.Request) {
	if !req.IsCall() && strings.HasPrefix(req.Method, "notifications/") {
		n.read.Add(1)
	}
}

func (n *noteCounter) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if strings.HasPrefix(method, "notifications/") {
			n.mu.Lock()
			n.handled++
			close(n.changed)
			n.changed = make(chan struct{})
			n.mu.Unlock()
		}
		return res, err
	}
}

// drain waits (at most max, or until ctx ends) until every notification
// read so far has been handled.
func (n *noteCounter) drain(ctx context.Context, max time.Duration) {
	target := n.read.Load()
	t := time.NewTimer(max)
	defer t.Stop()
	for {
		n.mu.Lock()
		done, ch := n.handled >= target, n.changed
		n.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// sseNotes counts the notifications in a Streamable HTTP (or legacy SSE)
// event stream as the SDK reads it.
type sseNotes struct {
	io.ReadCloser
	notes *noteCounter
	line  []byte
	data  []byte
}

func (s *sseNotes) Read(b []byte) (int, error) {
	n, err := s.ReadCloser.Read(b)
	for _, c := range b[:n] {
		if c != '\n' {
			if len(s.line) < 1<<16 { // longer lines are cut: such a notification is not counted (not waited for)
				s.line = append(s.line, c)
			}
			continue
		}
		line := strings.TrimSuffix(string(s.line), "\r")
		s.line = s.line[:0]
		switch {
		case line == "":
			s.event()
		case strings.HasPrefix(line, "data:"):
			s.data = append(s.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	return n, err
}

// event looks at a finished event's data.
func (s *sseNotes) event() {
	data := s.data
	s.data = s.data[:0]
	if len(data) == 0 || !bytes.Contains(data, []byte(`"notifications/`)) {
		return
	}
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok {
			s.notes.readOne(req)
		}
	}
}
