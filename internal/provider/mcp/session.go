package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type wireError = jsonrpc.Error

const (
	codeInvalidParams = jsonrpc.CodeInvalidParams
	// codeTransportRejected is the SDK's code for a request its transport
	// could not deliver (jsonrpc2.ErrRejected): not an answer from the upstream.
	codeTransportRejected = -32005
)

// session is one live connection to the upstream.
type session struct {
	cs        *sdk.ClientSession
	proc      *process // nil for HTTP
	transport string   // "stdio", "streamable-http" or "sse"
	started   time.Time
	// ctx is cancelled, with the reason as its cause, when the session ends;
	// calls in flight are tied to it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// listChanged asks the session's list loop to re-read the tools,
	// promptsChanged the prompts.
	listChanged    chan struct{}
	promptsChanged chan struct{}
	// copts are the session options of the handshake (nil: the SDK's defaults).
	copts *sdk.ClientSessionOptions
	// notes orders a passthrough session's notifications before the results
	// that follow them (nil for the shared session).
	notes *noteOrder
	// capture takes the tools/list results off the wire (capture.go): set
	// on the shared session, used by a stdio connection only (an HTTP one
	// never fills it); nil on passthrough sessions.
	capture *listCapture
	// probing is set while a liveness ping runs (liveness.go).
	probing atomic.Bool
	// sessionList is a passthrough session's own tool list (live.go).
	sessionList
}

type atomicBool = atomic.Bool

// end cancels the session's calls, closes it and stops its process.
func (s *session) end(cause error, grace time.Duration) {
	s.cancel(cause)
	if s.proc != nil {
		s.proc.stop(grace) // closing stdin first lets a well-behaved server exit by itself
	}
	_ = s.cs.Close()
}

// beginLocked starts the upstream in the background and returns a channel
// closed when the attempt ends. p.mu is held.
func (p *Provider) beginLocked() chan struct{} {
	if p.state == stateStarting {
		return p.starting
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	done := make(chan struct{})
	p.state, p.starting = stateStarting, done
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		p.connect(done)
	}()
	return done
}

// connect runs one start attempt: connect, initialize, list tools.
func (p *Provider) connect(done chan struct{}) {
	ctx, cancel := context.WithTimeout(p.base, p.opts.StartTimeout)
	defer cancel()
	start := time.Now()
	s, err := p.dial(ctx)
	var tools []*listedTool
	var prompts []*sdk.Prompt
	if err == nil {
		tools, err = p.listTools(ctx, s)
		if err != nil {
			err = fmt.Errorf("listing tools: %w", err)
			s.end(err, p.opts.StopGrace)
		} else {
			prompts = p.listPromptsOf(ctx, s)
		}
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && p.base.Err() == nil {
		err = fmt.Errorf("no answer within %s (start-up timeout): %w", p.opts.StartTimeout, err)
	}

	p.mu.Lock()
	if p.state == stateClosed {
		p.mu.Unlock()
		if s != nil && err == nil {
			s.end(errClosed(p.opts.ID), p.opts.StopGrace)
		}
		close(done)
		return
	}
	p.starting = nil
	if err != nil {
		p.failLocked(err)
		ran := p.everRan
		p.mu.Unlock()
		// An upstream that never started is reported once by the catalog
		// (a warning naming doctor) and by doctor's rows: here, at debug,
		// so a broken provider does not repeat itself on every call. One
		// that ran and now fails to restart is news: a warning.
		level := slog.LevelDebug
		if ran {
			level = slog.LevelWarn
		}
		p.log.Log(p.base, level, "upstream failed to start", "err", p.scrubErr(err))
		close(done)
		return
	}
	p.state, p.sess, p.everRan = stateRunning, s, true
	p.starts++
	changed := p.setToolsLocked(tools)
	if p.setUpstreamLocked(s.cs.InitializeResult(), prompts) {
		changed = true
	}
	p.mu.Unlock()
	close(done)
	p.log.Info("upstream started", "transport", s.transport, "tools", len(tools), "took", time.Since(start).Round(time.Millisecond))
	p.afterList(changed, tools)

	p.bg.Add(2)
	go func() { defer p.bg.Done(); p.watch(s) }()
	go func() { defer p.bg.Done(); p.listLoop(s) }()
}

// dial connects over the configured transport.
func (p *Provider) dial(ctx context.Context) (*session, error) {
	// The session exists before the handshake so that a list_changed sent
	// at any time, even during it, reaches its list loop.
	s := newSession()
	s.capture = newListCapture()
	co := &sdk.ClientOptions{
		Logger:       p.log,
		Capabilities: &sdk.ClientCapabilities{}, // the shared session relays nothing back (no sampling, roots, elicitation)
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.relist()
		},
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			select {
			case s.promptsChanged <- struct{}{}:
			default:
			}
		},
	}
	if p.opts.BareNames {
		sharedClientOfPassthrough(co)
	}
	client := sdk.NewClient(p.clientImpl(), co)
	if err := p.dialWith(ctx, client, s); err != nil {
		return nil, err
	}
	return s, nil
}

func newSession() *session {
	return &session{listChanged: make(chan struct{}, 1), promptsChanged: make(chan struct{}, 1)}
}

func (p *Provider) clientImpl() *sdk.Implementation {
	return &sdk.Implementation{Name: "agent-tools", Version: p.opts.ClientVersion}
}

// dialWith connects client over the configured transport into s.
func (p *Provider) dialWith(ctx context.Context, client *sdk.Client, s *session) error {
	var err error
	if p.opts.URL != "" {
		err = p.dialHTTP(ctx, client, s)
	} else {
		err = p.dialStdio(ctx, client, s)
	}
	if err != nil {
		return err
	}
	s.started = time.Now()
	return nil
}

// relist asks the session's list loop to re-read the tools.
func (s *session) relist() {
	select {
	case s.listChanged <- struct{}{}:
	default: // a refresh is already pending
	}
}

// listLoop re-reads the tool (or prompt) list each time the upstream says
// it changed.
func (p *Provider) listLoop(s *session) {
	for {
		prompts := false
		select {
		case <-s.ctx.Done():
			return
		case <-s.listChanged:
		case <-s.promptsChanged:
			prompts = true
		}
		ctx, cancel := context.WithTimeout(s.ctx, p.opts.StartTimeout)
		if prompts {
			list := p.listPromptsOf(ctx, s)
			cancel()
			p.mu.Lock()
			changed := p.sess == s && p.setUpstreamLocked(p.init, list)
			p.mu.Unlock()
			p.afterList(changed, nil)
			continue
		}
		tools, err := p.listTools(ctx, s)
		cancel()
		if err != nil {
			if s.ctx.Err() == nil {
				p.problem("re-listing tools after list_changed failed: %v", err)
			}
			continue
		}
		p.mu.Lock()
		changed := false
		if p.sess == s {
			changed = p.setToolsLocked(tools)
		}
		p.mu.Unlock()
		p.afterList(changed, tools)
	}
}

// maxPages bounds tools/list pagination (a server that never stops paging).
const maxPages = 100

// listTools lists the upstream's tools: each page as taken off the wire
// (capture.go), or as the SDK decoded it, converted at once (fromSDK). No
// SDK tool outlives it. The list is never nil (nil means "no list the
// upstream sent", which the cache never stores).
func (p *Provider) listTools(ctx context.Context, s *session) ([]*listedTool, error) {
	var out []*listedTool
	params := &sdk.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("tools/list still paginating after %d pages", maxPages)
		}
		res, err := s.cs.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		tools, err := s.capture.page(res)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = tools
		} else {
			out = append(out, tools...)
		}
		if res.NextCursor == "" {
			if out == nil { // "tools" absent or null: an empty list
				out = []*listedTool{}
			}
			return out, nil
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

// afterList saves what the upstream said to the cache and, when the tools
// or prompts changed, tells the runtime. live is the tool list the upstream
// just sent (nil when only the prompts were re-read): it is what the cache
// stores, not p.entries, which stays nil when a live list equal to the
// cached one kept the tools built from the cache (setToolsLocked). Saving
// p.entries then wrote "tools":null, and every later start saw no tools.
func (p *Provider) afterList(changed bool, live []*listedTool) {
	p.mu.Lock()
	tools, prompts, init := live, p.prompts, p.init
	if tools == nil {
		tools = p.entries // nil too if no live list was kept: save skips
	}
	onChange := p.opts.OnChange
	p.mu.Unlock()
	// Before the runtime is told: when it refreshes, the cache is current.
	if err := p.cache.save(tools, prompts, init); err != nil {
		p.log.Warn("cannot write the tool-list cache", "err", err)
	}
	if changed && onChange != nil {
		go onChange() // not waited for by Close: it runs the runtime's refresh
	}
}

// watch waits for the session to end on its own and handles the crash.
func (p *Provider) watch(s *session) {
	cause := s.wait()
	if s.ctx.Err() != nil { // ended by us (Close or a replaced session)
		return
	}
	p.died(s, cause)
}

// died records that a running session ended unexpectedly: its calls fail at
// once, and a restart is scheduled with exponential backoff.
func (p *Provider) died(s *session, cause error) {
	p.mu.Lock()
	if p.sess != s || p.state == stateClosed {
		p.mu.Unlock()
		s.end(cause, p.opts.StopGrace)
		return
	}
	p.sess = nil
	if time.Since(s.started) >= p.opts.StableAfter {
		p.failures = 0 // it ran long enough: this crash starts a new series
	}
	p.failLocked(fmt.Errorf("upstream ended: %w", cause))
	p.mu.Unlock()
	p.log.Error("upstream ended unexpectedly", "err", p.scrubErr(cause))
	s.end(cause, p.opts.StopGrace)
}

// failLocked records a failure and schedules the next attempt.
func (p *Provider) failLocked(err error) {
	p.state, p.lastErr, p.lastErrAt = stateFailed, p.scrubErr(err), time.Now()
	p.failures++
	delay := p.backoff(p.failures)
	p.nextTry = time.Now().Add(delay)
	if p.everRan && p.failures <= p.opts.MaxRestarts {
		p.timer = time.AfterFunc(delay, p.restart)
	}
}

// backoff is MinBackoff doubled per consecutive failure, at most MaxBackoff.
func (p *Provider) backoff(failures int) time.Duration {
	d := p.opts.MinBackoff
	for i := 1; i < failures && d < p.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.opts.MaxBackoff)
}

// restart is the automatic restart after a crash.
func (p *Provider) restart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == stateFailed {
		p.log.Info("restarting upstream", "attempt", p.failures)
		p.restarts++ // an automatic restart counts as the operator's does
		p.beginLocked()
	}
}
