// Package mcp is the "mcp" provider: an upstream MCP server, run as a child
// process over stdio or reached over Streamable HTTP (with a fallback to the
// legacy HTTP+SSE transport), whose tools join the catalog
// (docs/providers/mcp.md).
//
// Lazy and cached: constructing a Provider does nothing. Its tool list is kept
// on disk, keyed by the provider's connection settings, so discover and search
// answer before the upstream runs; the upstream starts on the first call, or
// on the first list when no cached list exists. The list is refreshed when the
// upstream starts and when it sends notifications/tools/list_changed, and
// Options.OnChange is told at once.
//
// Resilient: every call runs under the caller's deadline and cancellation (a
// cancelled call sends notifications/cancelled upstream); a session that dies
// fails its calls in flight with PROVIDER_UNAVAILABLE at once and is restarted
// with bounded exponential backoff; what the upstream writes is bounded (per
// message and per result) and checked line by line, so malformed output fails
// only the call it belongs to. Close ends the sessions and kills the process
// groups.
//
// Policy data only: a tool is read-only when Options.ReadOnly names it, or when
// Options.TrustAnnotations is set and the tool says readOnlyHint. Upstream
// annotations are never trusted otherwise.
//
// Passthrough (passthrough.go): the upstream's prompts and initialize result
// are kept (and cached) with its tools; OpenSession opens further sessions to
// the same upstream, one per downstream client of the facade's flat-mode
// passthrough, and BindCall runs a call through the pipeline on one of them.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Defaults applied to zero Options fields.
const (
	DefaultMaxMessageBytes = 16 << 20 // one JSON-RPC message from the upstream
	DefaultMaxResultBytes  = 4 << 20  // text of one call's result
	DefaultStartTimeout    = 30 * time.Second
	DefaultListWait        = 5 * time.Second
	DefaultMinBackoff      = 250 * time.Millisecond
	DefaultMaxBackoff      = 30 * time.Second
	DefaultMaxRestarts     = 5
	DefaultStableAfter     = 30 * time.Second
	DefaultStopGrace       = 2 * time.Second
)

var (
	_ provider.Provider  = (*Provider)(nil)
	_ provider.Starter   = (*Provider)(nil)
	_ provider.Closer    = (*Provider)(nil)
	_ provider.Diagnoser = (*Provider)(nil)

	_ provider.Restarter      = (*Provider)(nil)
	_ provider.RestartCounter = (*Provider)(nil)
	_ provider.Lifecycle      = (*Provider)(nil)
)

// Options configure a Provider. Exactly one of Command and URL is set.
type Options struct {
	// Header is the entry's id, description, confirmation, timeout (reported
	// in Info; the pipeline applies it) and read-only tool names.
	provider.Header
	// BareNames exposes the tools under their own names in flat mode (config prefix: "").
	BareNames bool

	// Command, Args, Env and Dir describe a stdio upstream. The child's
	// environment is PATH, HOME, LANG, LC_*, TMPDIR and TZ from the host, plus
	// Env; never the whole host environment. A Command without a slash is
	// looked up in the child's PATH.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string

	// URL and Headers describe a Streamable HTTP upstream (legacy SSE is tried
	// when the server does not speak Streamable HTTP).
	URL     string
	Headers map[string]string
	// OAuth authorizes requests to an HTTP upstream (oauth.go); nil: none.
	OAuth auth.OAuthHandler

	// TrustAnnotations lets the upstream's readOnlyHint mark a tool read-only
	// (and its destructiveHint force confirmation).
	TrustAnnotations bool

	// CacheDir holds the tool-list cache ("" = os.UserCacheDir()/agent-tools/mcp).
	CacheDir string
	// OnChange is called (from its own goroutine) after the tool list changed,
	// so the runtime can refresh at once.
	OnChange func()
	// Logger receives start/stop/crash and protocol problems (nil = discard).
	Logger *slog.Logger
	// Environ is the host environment the child's minimal one is drawn from (nil = os.Environ).
	Environ func() []string
	// ClientVersion is reported to the upstream in initialize.
	ClientVersion string

	MaxMessageBytes int           // 0 = DefaultMaxMessageBytes
	MaxResultBytes  int           // 0 = DefaultMaxResultBytes
	StartTimeout    time.Duration // connect + initialize + first list (0 = DefaultStartTimeout)
	ListWait        time.Duration // how long Tools waits for a start when nothing is cached (0 = DefaultListWait)
	MinBackoff      time.Duration // first restart delay (0 = DefaultMinBackoff)
	MaxBackoff      time.Duration // longest restart delay (0 = DefaultMaxBackoff)
	MaxRestarts     int           // automatic restarts in a row before waiting for a call (0 = DefaultMaxRestarts)
	StableAfter     time.Duration // uptime after which a crash counts as the first (0 = DefaultStableAfter)
	StopGrace       time.Duration // Close: wait for exit after closing stdin, then after SIGTERM (0 = DefaultStopGrace)
	PingTimeout     time.Duration // liveness ping after a timed-out call (0 = DefaultPingTimeout)
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxRestarts <= 0 {
		o.MaxRestarts = DefaultMaxRestarts
	}
	def(&o.StartTimeout, DefaultStartTimeout)
	def(&o.ListWait, DefaultListWait)
	def(&o.MinBackoff, DefaultMinBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.StableAfter, DefaultStableAfter)
	def(&o.StopGrace, DefaultStopGrace)
	def(&o.PingTimeout, DefaultPingTimeout)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "devel"
	}
	return o
}

// state is where the upstream is in its life.
type state int

const (
	stateIdle     state = iota // never started (tools from the cache, if any)
	stateStarting              // a start is in flight
	stateRunning               // a live session
	stateFailed                // the last start failed or the session died
	stateClosed
)

// Provider is an upstream MCP server. It is safe for concurrent use.
type Provider struct {
	opts     Options
	info     catalog.ProviderInfo
	log      *slog.Logger
	readOnly map[string]bool
	cache    *diskCache

	// base is cancelled by Close: it bounds starts and background work.
	base     context.Context
	stopBase context.CancelFunc
	bg       sync.WaitGroup

	mu        sync.Mutex
	state     state
	sess      *session
	starting  chan struct{} // closed when the start in flight ends
	lastErr   error
	lastErrAt time.Time // when lastErr happened
	failures  int       // consecutive failures (start or crash)
	nextTry   time.Time // no start before this time after a failure
	everRan   bool      // a session ran once: crashes are restarted automatically
	timer     *time.Timer
	legacySSE bool // the HTTP upstream spoke only the legacy SSE transport
	// listWaitEnd bounds, once for the provider's life, how long Tools waits
	// for the upstream when there is no tool list yet.
	listWaitEnd time.Time

	cacheRead bool
	cacheErr  error
	listed    bool           // tools holds a list (from the cache or the upstream)
	served    freshFlag      // Tools returned the current list (see Fresh)
	fromCache bool           // ... read from the disk cache, not yet confirmed by the upstream
	listKey   string         // digest of entries, taken when the next live list needs it ("" until then)
	tools     []catalog.Tool // handed out as is until the list changes
	entries   []*listedTool  // the live list tools was built from (for the cache and listKey; shares strings and schemas with tools)
	cacheFile []byte         // the cache file tools was built from (nil once a live list arrived), for listKey
	toolDiags []provider.Diagnostic
	// What else the upstream said (passthrough.go): its initialize result
	// and its prompts, live or from the cache; nil when unknown.
	init    *sdk.InitializeResult
	prompts []*sdk.Prompt
	// check is the runtime's pin check, run before every forwarded call (live.go).
	check provider.CallCheck
	// open are the separate sessions of a passthrough (OpenSession).
	open     map[*sdk.ClientSession]*session
	problems []string // recent protocol problems, newest last
	starts   int      // sessions started, for doctor
	restarts int      // restarts begun: the operator's and the automatic ones (restart.go)
}

// New returns a provider; it starts nothing.
func New(o Options) *Provider {
	o = o.withDefaults()
	base, stop := context.WithCancel(context.Background())
	p := &Provider{opts: o, log: o.Logger.With("provider", o.ID), base: base, stopBase: stop, readOnly: map[string]bool{}}
	for _, n := range o.ReadOnly {
		p.readOnly[n] = true
	}
	p.info = catalog.ProviderInfo{
		ID: o.ID, Kind: Name, Description: o.Description, DiscoverHint: o.DiscoverHint,
		RequireConfirm: o.RequireConfirm, Timeout: o.Timeout, HostLocal: o.BareNames,
	}
	if p.info.Description == "" {
		p.info.Description = defaultDescription(o)
	}
	p.cache = newDiskCache(o)
	return p
}

func defaultDescription(o Options) string {
	if o.URL != "" {
		if u, err := url.Parse(o.URL); err == nil {
			return "MCP server at " + u.Scheme + "://" + u.Host + u.Path // no user info, no query
		}
		return "MCP server over HTTP"
	}
	// Until the upstream describes itself (Info, describe.go). Not the args:
	// they may hold secrets.
	return "MCP server run by " + filepath.Base(o.Command) + " (it has not described itself yet)"
}

// Bind sets what the runtime provides after construction: the logger and
// the callback told when the tool list changes (the runtime refreshes its
// catalog there). Call it before Start, Tools or Call.
func (p *Provider) Bind(log *slog.Logger, onChange func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if log != nil {
		p.opts.Logger = log
		p.log = log.With("provider", p.opts.ID)
	}
	p.opts.OnChange = onChange
}

// Info describes the provider.
func (p *Provider) Info() catalog.ProviderInfo {
	if p.opts.Description != "" {
		return p.info
	}
	p.mu.Lock()
	init := p.init // live or cached (describe.go): the upstream's own words
	p.mu.Unlock()
	info := p.info
	if d := describeUpstream(init); d != "" {
		info.Description = d
	}
	return info
}

// Start reads the cached tool list. Without one it begins starting the
// upstream in the background (the first list needs it) and returns at once,
// so a slow or broken upstream never delays the others.
func (p *Provider) Start(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readCacheLocked()
	if !p.listed && p.state == stateIdle {
		p.beginLocked()
		// The list wait runs from now, alongside the other providers' starts.
		p.listWaitEnd = time.Now().Add(p.opts.ListWait)
	}
	return nil
}

// Tools returns the current tools: the upstream's live list, else the cached
// one. It returns the same slice until the list changes. With no list at all
// it starts the upstream; only the first start is waited for, and for at most
// Options.ListWait in all (Tools is called before every list and call of
// every provider: a slow upstream must not stall the others). A later attempt
// runs in the background; its tools appear through OnChange.
func (p *Provider) Tools(ctx context.Context) ([]catalog.Tool, error) {
	p.mu.Lock()
	p.readCacheLocked()
	if p.listed {
		t := p.tools
		p.served.Store(true)
		p.mu.Unlock()
		return t, nil
	}
	switch {
	case p.state == stateClosed:
		p.mu.Unlock()
		return nil, errClosed(p.opts.ID)
	case p.state == stateIdle, p.state == stateFailed && !time.Now().Before(p.nextTry):
		p.beginLocked()
	}
	if p.listWaitEnd.IsZero() {
		p.listWaitEnd = time.Now().Add(p.opts.ListWait)
	}
	wait, budget := p.starting, time.Until(p.listWaitEnd)
	p.mu.Unlock()

	if wait != nil && budget > 0 {
		t := time.NewTimer(budget)
		select {
		case <-wait:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listed {
		p.served.Store(true)
		return p.tools, nil
	}
	if p.state == stateStarting {
		return nil, startingError{p.opts.ID}
	}
	return nil, p.unavailableLocked()
}

// Call runs one upstream tool under ctx's deadline.
func (p *Provider) Call(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	return p.call(ctx, tool, args, nil)
}

// CallValues runs a call with its per-call values: a Forward for this
// provider runs it on that passthrough session instead of the shared one,
// and hands the upstream's own result over as well.
func (p *Provider) CallValues(ctx context.Context, tool catalog.Tool, args json.RawMessage, v provider.Values) (*provider.Result, error) {
	b := v.Forward
	if b == nil || b.Provider != p.opts.ID || b.Session == nil {
		b = nil
	}
	return p.call(ctx, tool, args, b)
}

func (p *Provider) call(ctx context.Context, tool catalog.Tool, args json.RawMessage, b *provider.Forward) (*provider.Result, error) {
	var s *session
	var err error
	if b != nil {
		s, err = p.boundSession(ctx, b)
	} else {
		s, err = p.session(ctx)
	}
	if err != nil {
		return nil, err
	}
	if err := p.checkCall(ctx, s, tool); err != nil {
		return nil, err
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(s.ctx, func() { cancel(errSessionEnded) })
	defer stop()

	params := &sdk.CallToolParams{Name: tool.Name, Arguments: args}
	var notes *noteWait
	if b != nil {
		params.Meta = b.Meta
		notes = &noteWait{}
		callCtx = context.WithValue(callCtx, noteWaitKey{}, notes) // the POST's stream marks it (sseNotes)
	}
	res, err := callTool(callCtx, s, params)
	if err != nil && (errors.Is(err, errStuck) || errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		p.probe(s) // a timed-out call: is the upstream still answering at all?
	}
	if b != nil && s.notes != nil {
		s.notes.drain(callCtx, notes) // what the upstream sent before its answer is relayed first
	}
	if err != nil {
		return nil, p.callError(ctx, s, tool, err)
	}
	if b != nil && b.Raw != nil {
		b.Raw(res)
	}
	return toResult(res, p.opts.MaxResultBytes), nil
}

// Session returns the live upstream session, starting it if needed (for a
// passthrough that forwards more than tools). It fails like Call does.
func (p *Provider) Session(ctx context.Context) (*sdk.ClientSession, error) {
	s, err := p.session(ctx)
	if err != nil {
		return nil, err
	}
	return s.cs, nil
}

var errSessionEnded = errors.New("upstream session ended")

func errClosed(id string) error {
	return toolerr.New(toolerr.ProviderUnavailable, "The runtime is shutting down.", "provider %q is closed", id)
}

// session returns a running session: the live one, the one starting (waited
// for under ctx), or a new one. After a failure it fails fast until the
// backoff delay has passed.
func (p *Provider) session(ctx context.Context) (*session, error) {
	waited := false
	for {
		p.mu.Lock()
		var wait chan struct{}
		switch {
		case p.state == stateClosed:
			p.mu.Unlock()
			return nil, errClosed(p.opts.ID)
		case p.sess != nil:
			s := p.sess
			p.mu.Unlock()
			return s, nil
		case p.state == stateStarting:
			wait = p.starting
		case !waited && (p.state == stateIdle || !time.Now().Before(p.nextTry)):
			wait = p.beginLocked()
		default:
			err := p.unavailableLocked()
			p.mu.Unlock()
			return nil, err
		}
		p.mu.Unlock()
		select {
		case <-wait:
			waited = true
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// unavailableLocked is the PROVIDER_UNAVAILABLE error for the current failure.
func (p *Provider) unavailableLocked() error {
	msg := "upstream is not running"
	if needsLogin(p.lastErr) {
		return needsLoginError(p.opts.ID, p.scrubErr(p.lastErr))
	}
	if p.lastErr != nil {
		msg = p.scrubErr(p.lastErr).Error()
	}
	e := toolerr.New(toolerr.ProviderUnavailable, "", "provider %q is unavailable: %s", p.opts.ID, msg)
	if wait := time.Until(p.nextTry); wait > 0 {
		e.Hint = fmt.Sprintf("It is restarted automatically; retry in %s. If it keeps failing, tell the user (agent-tools doctor shows why).", (wait + 99*time.Millisecond).Truncate(100*time.Millisecond))
		e.With("retry_after_ms", wait.Milliseconds())
	} else {
		e.Hint = "Retry once; if it fails again, tell the user (agent-tools doctor shows why)."
	}
	return e
}

// callError maps a failed CallTool to what the pipeline expects: the caller's
// own deadline or cancellation as ctx's error, a dead session or a transport
// failure as PROVIDER_UNAVAILABLE, an upstream JSON-RPC error as a backend
// error (or INVALID_ARGUMENTS / UNKNOWN_TOOL when it says so).
func (p *Provider) callError(ctx context.Context, s *session, tool catalog.Tool, err error) error {
	if ctx.Err() != nil && s.ctx.Err() == nil {
		return ctx.Err()
	}
	var we *wireError
	upstream := errors.As(err, &we) && we.Code != codeTransportRejected
	if !upstream && s.ctx.Err() == nil {
		// EOF or a closed connection: the session is ending; let the watcher
		// record why, so that the error names the cause (exit status, stderr).
		t := time.NewTimer(500 * time.Millisecond)
		select {
		case <-s.ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if s.ctx.Err() != nil {
		return toolerr.New(toolerr.ProviderUnavailable,
			"The upstream is restarted automatically; retry in a moment. If it fails again the same way, the call itself may be what crashes it: tell the user.",
			"provider %q: the upstream ended during the call to %q: %v", p.opts.ID, tool.Name, p.scrubErr(context.Cause(s.ctx)))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if upstream {
		msg := text.Clip(we.Message, 2000)
		switch {
		case we.Code == codeInvalidParams && strings.Contains(strings.ToLower(we.Message), "unknown tool"):
			s.relist() // our list is stale: re-read it
			return toolerr.New(toolerr.UnknownTool, "The upstream no longer offers this tool; discover the provider's tools again.",
				"upstream %q does not know the tool %q: %s", p.opts.ID, tool.Name, msg)
		case we.Code == codeInvalidParams:
			return toolerr.New(toolerr.InvalidArguments, "Check the tool's schema (discover it again) and fix the arguments.",
				"upstream %q rejected the arguments of %q: %s", p.opts.ID, tool.Name, msg)
		}
		return toolerr.New(toolerr.BackendError, "The upstream server answered with a protocol error; read the message, and tell the user if it persists.",
			"upstream %q failed the call to %q: %s (code %d)", p.opts.ID, tool.Name, msg, we.Code)
	}
	return toolerr.New(toolerr.ProviderUnavailable, "Retry once; if it fails again, tell the user (agent-tools doctor shows why).",
		"provider %q: calling %q failed: %s", p.opts.ID, tool.Name, text.Clip(p.scrubErr(err).Error(), 2000))
}

// Close ends the session, kills the upstream's process group and stops
// background work. Calls in flight fail with PROVIDER_UNAVAILABLE.
func (p *Provider) Close() error {
	p.mu.Lock()
	if p.state == stateClosed {
		p.mu.Unlock()
		return nil
	}
	p.state = stateClosed
	s := p.sess
	p.sess = nil
	if p.timer != nil {
		p.timer.Stop()
	}
	open := make([]*session, 0, len(p.open))
	for _, o := range p.open {
		open = append(open, o)
	}
	p.mu.Unlock()
	if s != nil {
		s.cancel(errClosed(p.opts.ID)) // calls in flight fail now, with this reason
	}
	for _, o := range open {
		o.cancel(errClosed(p.opts.ID))
	}
	p.stopBase() // aborts a start in flight
	if s != nil {
		s.end(errClosed(p.opts.ID), p.opts.StopGrace)
	}
	var wg sync.WaitGroup
	for _, o := range open {
		wg.Add(1)
		go func() { defer wg.Done(); o.end(errClosed(p.opts.ID), p.opts.StopGrace) }()
	}
	wg.Wait()
	p.bg.Wait()
	return nil
}

// Diagnostics reports the upstream's state and last error, the tools it
// offered that were rejected, and recent protocol problems.
func (p *Provider) Diagnostics() []provider.Diagnostic {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.opts.ID
	line := provider.Diagnostic{Provider: id, Item: "upstream", Status: "ok"}
	where := p.endpoint()
	switch p.state {
	case stateRunning:
		line.Reason = fmt.Sprintf("running (%s, %s, %d tools, up %s)", where, p.sess.transport, len(p.tools), time.Since(p.sess.started).Round(time.Second))
	case stateStarting:
		line.Reason = fmt.Sprintf("starting (%s)", where)
	case stateClosed:
		line.Reason = "closed"
	case stateFailed:
		line.Status = "failed"
		if needsLogin(p.lastErr) {
			line.Status = "needs_login"
		}
		line.Reason = fmt.Sprintf("failed (%s): %v", where, p.lastErr)
		if wait := time.Until(p.nextTry); wait > 0 {
			line.Reason += fmt.Sprintf("; next attempt in %s", wait.Round(100*time.Millisecond))
		}
	default:
		if p.fromCache {
			line.Reason = fmt.Sprintf("cached (%s): %d tools from the cache, not started yet (it starts on the first call)", where, len(p.tools))
		} else {
			line.Reason = fmt.Sprintf("idle (%s): not started yet", where)
		}
	}
	if n := len(p.open); n > 0 {
		line.Reason += fmt.Sprintf("; %d passthrough session(s), one per client", n)
	}
	if p.state != stateFailed && p.lastErr != nil {
		line.Reason += fmt.Sprintf("; last error: %v", p.lastErr)
	}
	out := []provider.Diagnostic{line}
	out = append(out, p.toolDiags...)
	if p.listed && !p.fromCache {
		var unknown []string
		have := map[string]bool{}
		for _, t := range p.tools {
			have[t.Name] = true
		}
		for n := range p.readOnly {
			if !have[n] {
				unknown = append(unknown, n)
			}
		}
		sort.Strings(unknown)
		for _, n := range unknown {
			out = append(out, provider.Diagnostic{Provider: id, Item: n, Status: "skipped", Reason: "listed in readonly, but the upstream offers no tool of that name"})
		}
	}
	if p.cacheErr != nil {
		out = append(out, provider.Diagnostic{Provider: id, Item: "cache", Status: "skipped", Reason: p.cacheErr.Error()})
	}
	for _, pr := range p.problems {
		out = append(out, provider.Diagnostic{Provider: id, Item: "protocol", Status: "failed", Reason: pr})
	}
	return out
}

// readCacheLocked loads the cached tool list, once.
func (p *Provider) readCacheLocked() {
	if p.cacheRead {
		return
	}
	p.cacheRead = true
	c, err := p.cache.load()
	if err != nil {
		p.cacheErr = err
		p.log.Warn("tool-list cache unusable", "err", err)
	}
	if c != nil && !p.listed {
		p.setCachedToolsLocked(c)
		p.init, p.prompts = c.Init, c.Prompts
	}
}

func (p *Provider) endpoint() string {
	if p.opts.URL != "" {
		return "http " + redactURL(p.opts.URL)
	}
	return "stdio " + filepath.Base(p.opts.Command)
}

// redactURL is raw without userinfo, query and fragment, and with the
// ${VAR} values the redactor knows (path segments) replaced by their names.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	return redact.String(u.String())
}

const maxProblems = 5

// problem records a protocol problem for doctor and the log.
func (p *Provider) problem(format string, args ...any) {
	msg := p.scrubErr(fmt.Errorf(format, args...)).Error()
	p.log.Warn("upstream protocol problem", "problem", msg)
	p.mu.Lock()
	p.problems = append(p.problems, time.Now().Format(time.TimeOnly)+" "+msg)
	if len(p.problems) > maxProblems {
		p.problems = p.problems[len(p.problems)-maxProblems:]
	}
	p.mu.Unlock()
}
