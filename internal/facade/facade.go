// Package facade is the MCP surface models see: the progressive, search and
// flat exposure modes over the registry, every call routed through the one
// pipeline. Descriptions here are written for models and pinned by snapshots.
package facade

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/passthrough"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Mode is how the catalog is exposed.
type Mode string

const (
	Progressive Mode = "progressive"
	Search      Mode = "search"
	Flat        Mode = "flat"
)

// Catalog is what the facade reads from the registry.
type Catalog interface {
	pipeline.Catalog
	// Refreshed marks ctx as refreshed so the pipeline skips a second re-read.
	Refreshed(ctx context.Context) context.Context
	Providers() []registry.ProviderStatus
	Search(query string, o index.Options) []index.Hit
	Skill(providerID, name string) (catalog.Skill, bool)
}

// Options configure a Facade.
type Options struct {
	Mode    Mode
	Rules   policy.Rules // hides denied tools from listings
	Name    string       // server implementation name
	Version string
	Logger  *slog.Logger
	// Prompts, when set, are served as MCP prompts (re-read on prompts/list).
	Prompts PromptSource
	// SessionID mints HTTP session ids (nil = the SDK's random ids).
	SessionID func() string
	// ProgressEvery is the heartbeat interval for calls that carry a progress
	// token (default 5s).
	ProgressEvery time.Duration
	// Profile is the profile this facade serves ("" = the default /mcp);
	// View is its filter on providers and tools (nil = everything).
	Profile string
	View    *policy.View
	// Access returns the current profiles and per-identity rules (nil: none);
	// tools/list hides what the caller's identity may not call (views.go).
	Access func() *policy.Access
	// ScriptsMayMutate reports whether execute_javascript's scripts may
	// call tools that change state (code.allowMutations; nil: they may
	// not). The gate refuses such a call on the tool the pipeline resolved.
	ScriptsMayMutate func() bool
}

// Facade owns one mcp.Server whose tool set follows the registry.
type Facade struct {
	cat    Catalog
	run    pipeline.Handler
	opts   Options
	server *sdk.Server
	log    *slog.Logger

	policy atomic.Pointer[policy.Rules] // swapped by SetRules on a config reload

	pt *passthrough.Passthrough // upstream prompts and the flat-mode passthrough

	mu            sync.Mutex
	current       map[string]string // MCP tool name → fingerprint of its definition
	owners        map[string]owner  // MCP tool name → what it stands for (views.go); replaced, never mutated
	prompts       map[string]bool   // published prompt names
	promptsSynced bool
}

// ConfirmArg is the property flat mode adds to a mutating tool's schema so
// the agent can confirm without a tool's own parameters being shadowed.
const ConfirmArg = "agent_tools_confirm"

// New builds the facade and its server; call Sync (or let the registry's
// change listener call it) to publish tools.
func New(cat Catalog, run pipeline.Handler, o Options) *Facade {
	if o.Mode == "" {
		o.Mode = Progressive
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 5 * time.Second
	}
	if o.Name == "" {
		o.Name = "agent-tools"
	}
	f := &Facade{cat: cat, run: run, opts: o, log: o.Logger, current: map[string]string{}, prompts: map[string]bool{}}
	f.policy.Store(&o.Rules)
	f.pt = passthrough.New(passthrough.Options{Catalog: cat, Forward: o.Mode == Flat, LocalPrompt: f.localPrompt, Logger: o.Logger,
		Gate: f.gateOp, Sees: f.seesOp, Published: func(name string) bool { return f.rules().Visible(name) }, InView: f.providerInView}) // gate.go
	caps := &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}}
	if o.Prompts != nil {
		caps.Prompts = &sdk.PromptCapabilities{ListChanged: true}
	}
	sopts := &sdk.ServerOptions{
		Instructions: instructions(o.Mode, o.Rules.Confirm),
		Capabilities: caps,
		// SessionID mints stateful HTTP session ids; replicas put their own
		// name in them (internal/cluster) so a balancer can route on it.
		GetSessionID: o.SessionID,
	}
	f.pt.Hooks(sopts) // they answer only when an upstream is forwarded; initialize advertises what it offers
	f.server = sdk.NewServer(&sdk.Implementation{Name: o.Name, Version: o.Version}, sopts)
	f.pt.Attach(f.server)
	f.server.AddReceivingMiddleware(f.refreshOnList, f.filterList, f.pt.Receive)
	f.server.AddSendingMiddleware(passthrough.RewriteSends)
	f.SyncPrompts()
	return f
}

// SetRules swaps the policy rules that hide denied tools (a config reload)
// and republishes the tools.
func (f *Facade) SetRules(r policy.Rules) {
	f.policy.Store(&r)
	f.Sync()
}

func (f *Facade) rules() policy.Rules { return *f.policy.Load() }

// Server is the MCP server to run on a transport.
func (f *Facade) Server() *sdk.Server { return f.server }

// Mode reports the exposure mode.
func (f *Facade) Mode() Mode { return f.opts.Mode }

func instructions(m Mode, confirm policy.ConfirmMode) string { return specOf(m).instructions(confirm) }

// refreshOnList re-reads dynamic providers before tools/list and tools/call so
// that a script saved a moment ago is listed and callable without a restart,
// and answers calls of tools that do not exist with UNKNOWN_TOOL (a tool
// result that teaches) rather than a bare protocol error.
func (f *Facade) refreshOnList(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "prompts/list", "prompts/get":
			f.SyncPrompts()
		case "tools/list":
			if f.cat.Refresh(provider.WithRescan(ctx)) { // a listing is rare: always complete, even before a watcher's event
				f.Sync()
			}
		case "tools/call":
			if f.cat.Refresh(ctx) {
				f.Sync()
			}
			if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil && !f.published(call.Params.Name) && f.cat.Refresh(provider.WithRescan(ctx)) {
				f.Sync() // an unknown name: one full rescan first (a script saved a moment ago)
			}
			ctx = f.cat.Refreshed(ctx)
			if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil && !f.published(call.Params.Name) {
				return f.unknownMCPTool(ctx, call), nil
			}
		}
		return next(ctx, method, req)
	}
}

func (f *Facade) published(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.current[name]
	return ok
}

// unknownMCPTool answers a call of a tool this server does not list. It goes
// through the pipeline so it is audited and loop-guarded like any call.
func (f *Facade) unknownMCPTool(ctx context.Context, call *sdk.CallToolRequest) *sdk.CallToolResult {
	name := call.Params.Name
	f.mu.Lock()
	names := make([]string, 0, len(f.current))
	for n := range f.current {
		names = append(names, n)
	}
	f.mu.Unlock()
	spec := specOf(f.opts.Mode)
	hint := spec.unknownHint
	req := &pipeline.Request{Via: name, Tool: name, Args: call.Params.Arguments, Shape: spec.unknown}
	f.bindSession(call, req) // first: what a miss may teach depends on who asks
	if h, ok := f.cat.(interface{ HeldError(string) *toolerr.Error }); ok {
		if h.HeldError(name) != nil { // held by its pin or the scanner: the pipeline answers DENIED, with the approve command
			return f.call(ctx, call, req)
		}
	}
	if req.Malformed = f.missError(ctx, req); req.Malformed == nil && !f.backNow(req) { // miss.go: the name may be another mode's or provider's; an upstream just back may have it
		req.Malformed = toolerr.New(toolerr.UnknownTool, hint, "this server has no tool named %q", text.Clip(name, 200)).
			With("did_you_mean", text.Suggestions(name, f.namesSeenBy(&req.Caller, names), 3))
	}
	return f.call(ctx, call, req)
}

// namesSeenBy keeps the published MCP tool names the caller may see: a
// suggestion never names a tool that is hidden from who asks.
func (f *Facade) namesSeenBy(c *policy.Caller, names []string) []string {
	f.mu.Lock()
	owners := f.owners
	f.mu.Unlock()
	sees := f.seer(c)
	seen := map[string]bool{}
	kept := names[:0]
	for _, n := range names {
		o, known := owners[n]
		switch {
		case !known || o.unlisted:
			continue
		case o.canonical != "":
			if !sees(o.provider, o.canonical) {
				continue
			}
		case o.provider != "":
			v, done := seen[o.provider]
			if !done {
				v = false
				for _, t := range f.visibleTools(o.provider) {
					if sees(t.Provider, t.Canonical) {
						v = true
						break
					}
				}
				seen[o.provider] = v
			}
			if !v {
				continue
			}
		}
		kept = append(kept, n)
	}
	return kept
}

// Sync publishes the tool set the current catalog calls for, adding, replacing
// and removing only what changed (clients get one list_changed).
func (f *Facade) Sync() {
	defer f.pt.SyncPrompts() // after the unlock: upstream prompts follow the providers too
	f.mu.Lock()
	defer f.mu.Unlock()
	want := f.desired()
	owners := make(map[string]owner, len(want))
	for n, d := range want {
		owners[n] = d.owner
	}
	f.owners = owners
	var remove []string
	for name := range f.current {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	if len(remove) > 0 {
		sort.Strings(remove)
		f.server.RemoveTools(remove...)
		for _, n := range remove {
			delete(f.current, n)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := want[n]
		if f.current[n] == d.fingerprint {
			continue
		}
		f.server.AddTool(d.tool, d.handler)
		f.current[n] = d.fingerprint
	}
}

type toolDef struct {
	tool        *sdk.Tool
	handler     sdk.ToolHandler
	fingerprint string
	owner       owner // views.go
}

func (f *Facade) desired() map[string]toolDef {
	provs := f.visibleProviders()
	defs := f.build(f.spec(provs), provs) // modes.go
	out := make(map[string]toolDef, len(defs))
	for _, d := range defs {
		b, _ := json.Marshal(d.tool)
		d.fingerprint = string(b)
		out[d.tool.Name] = d
	}
	return out
}

// Tools returns the MCP tool definitions the facade publishes now (for
// snapshots, the CLI and the context-cost benchmark).
func (f *Facade) Tools() []*sdk.Tool {
	want := f.desired()
	out := make([]*sdk.Tool, 0, len(want))
	for _, d := range want {
		if !d.owner.unlisted { // views.go
			out = append(out, d.tool)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// visibleProviders are the enabled providers, built-ins first, each with the
// skills policy does not deny.
func (f *Facade) visibleProviders() []registry.ProviderStatus {
	var out []registry.ProviderStatus
	for _, p := range f.cat.Providers() {
		if p.Enabled && f.providerInView(p.Info.ID) {
			p.Skills = f.visibleSkills(p.Info, p.Skills)
			out = append(out, p)
		}
	}
	return out
}

// visibleSkills are the skills policy does not deny, by their canonical
// names (denied skills are hidden like denied tools).
func (f *Facade) visibleSkills(info catalog.ProviderInfo, skills []catalog.Skill) []catalog.Skill {
	out := skills[:0:0]
	for _, s := range skills {
		if f.skillVisible(info, s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func (f *Facade) skillVisible(info catalog.ProviderInfo, name string) bool {
	canonical, err := registry.SkillCanonical(naming.SchemeOf(f.cat), info, name)
	return err == nil && f.visible(info.ID, canonical)
}

// visibleTools are a provider's tools that policy does not deny.
func (f *Facade) visibleTools(providerID string) []catalog.Tool {
	all := f.cat.Tools(providerID)
	// Sized once: growing it tool by tool copied a 10,000-tool catalog
	// ~20 times over on every help and list (a tenth of a warm start).
	out := make([]catalog.Tool, 0, len(all))
	for _, t := range all {
		if f.visible(t.Provider, t.Canonical) {
			out = append(out, t)
		}
	}
	return out
}

// call runs one request through the pipeline and renders the MCP result.
func (f *Facade) call(ctx context.Context, mreq *sdk.CallToolRequest, req *pipeline.Request) *sdk.CallToolResult {
	f.lendScriptHost(mreq, req) // code.go: a script's tools.call
	if _, flat := req.Shape.(flatShape); flat {
		res, ok := f.pt.Call(ctx, mreq, req.Tool, func(ctx context.Context, fwd *provider.Forward) (*sdk.CallToolResult, bool) {
			f.bindSession(mreq, req)
			req.Values.Forward = fwd // the client's own upstream session
			resp := f.run(ctx, req)
			return render(resp), resp.Result != nil
		})
		if ok {
			return res // a flat call of a forwarded provider's tool
		}
	}
	f.bindSession(mreq, req) // first: what a miss may teach depends on who asks
	f.teachMiss(ctx, req)    // miss.go
	ctx = provider.WithCaller(ctx, provider.Caller{Session: req.Session, Client: req.Client, User: userOf(mreq)})
	ctx, stop := f.heartbeat(ctx, mreq, req)
	resp := f.withPending(req, f.run(ctx, req)) // code.go: tokens a script drew go to the model
	stop()
	out := render(resp)
	if specOf(f.opts.Mode).readsText && resp.Result != nil && resp.Result.Content != nil {
		out.Content = []sdk.Content{&sdk.TextContent{Text: resp.Result.Text}} // the text mode reads the rendering
	}
	return out
}

// identityOf is who the caller authenticated as: the transport's bearer
// identity over HTTP (never the token), else this process (stdio, or HTTP
// without auth: one local user).
func identityOf(mreq *sdk.CallToolRequest) string {
	if mreq.Extra != nil && mreq.Extra.TokenInfo != nil && mreq.Extra.TokenInfo.UserID != "" {
		return mreq.Extra.TokenInfo.UserID
	}
	return processIdentity
}

// perRequestProtocol is the first protocol version without sessions
// (server/discover, per-request _meta): no server-to-client requests.
const perRequestProtocol = "2026-07-28"

var processIdentity = "process:" + strconv.Itoa(os.Getpid())

func (f *Facade) bindSession(mreq *sdk.CallToolRequest, req *pipeline.Request) {
	// Who asks is bound first and always: the gate and every teaching
	// decide on it, with or without a session.
	req.Identity = identityOf(mreq)
	req.Claims = claimsOf(mreq.Extra)
	req.Profile = f.opts.Profile
	if req.Door == "" {
		req.Door = policy.DoorMCP
	}
	ss := mreq.Session
	if ss == nil {
		return
	}
	// Keys never use memory addresses: in stateless HTTP the SDK makes a
	// throwaway session per request, so the identity (who authenticated) and
	// the session id (when there is one) scope the loop guard and tokens.
	req.Session = ss.ID()
	if mreq.Extra != nil && mreq.Extra.Header != nil { // HTTP: the client's trace, if it sent one
		req.TraceParent, req.TraceState = mreq.Extra.Header.Get("traceparent"), mreq.Extra.Header.Get("tracestate")
	}
	if ip := ss.InitializeParams(); ip != nil {
		if ip.ClientInfo != nil {
			req.Client = ip.ClientInfo.Name
		}
		// Elicitation needs a session to send the request on: a per-request
		// call of the 2026-07-28 protocol has none, so a person is asked
		// out of band (the console) or the agent confirms.
		if ip.Capabilities != nil && ip.Capabilities.Elicitation != nil && ip.ProtocolVersion < perRequestProtocol {
			req.AskHuman = func(ctx context.Context, message string) (policy.Approval, error) {
				res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: message, RequestedSchema: approvalSchema})
				if err != nil {
					return policy.Declined, err
				}
				if _, answered := res.Content["approve"].(bool); res.Action == "accept" && !answered {
					// an accept without the answer is not a "no"
					return policy.Declined, fmt.Errorf("the client accepted the confirmation request without answering it (no approve field)")
				}
				return approvalOf(res), nil
			}
		}
	}
}

// heartbeat sends progress notifications while a call runs, when the client
// asked for progress, so long calls show life and clients don't time out.
// The returned context carries a provider.Progress: a provider that reports
// real progress (a worker's events) replaces the generic ticks while it does.
func (f *Facade) heartbeat(ctx context.Context, mreq *sdk.CallToolRequest, req *pipeline.Request) (context.Context, func()) {
	if mreq.Session == nil || mreq.Params == nil {
		return ctx, func() {}
	}
	token := mreq.Params.GetProgressToken()
	if token == nil {
		return ctx, func() {}
	}
	var (
		mu       sync.Mutex
		last     float64   // progress values must increase (MCP)
		lastReal time.Time // when the provider last reported
		ended    bool
	)
	send := func(done, total float64, msg string, real bool) {
		mu.Lock()
		defer mu.Unlock()
		if ended || (!real && time.Since(lastReal) < f.opts.ProgressEvery) {
			return
		}
		if real {
			lastReal = time.Now()
		}
		if done <= last {
			done = last + 1
		}
		last = done
		p := &sdk.ProgressNotificationParams{ProgressToken: token, Progress: done, Message: msg}
		if total > done {
			p.Total = total
		}
		_ = mreq.Session.NotifyProgress(ctx, p)
	}
	pctx := provider.WithProgress(ctx, func(done, total float64, msg string) { send(done, total, msg, true) })
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		t := time.NewTicker(f.opts.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				send(0, 0, fmt.Sprintf("%s still running after %s", req.Tool, time.Since(start).Round(time.Second)), false)
			}
		}
	}()
	return pctx, func() {
		close(done)
		wg.Wait()
		mu.Lock()
		ended = true
		mu.Unlock()
	}
}

func render(resp *pipeline.Response) *sdk.CallToolResult {
	if resp.Err != nil {
		body := resp.Err.Body()
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: resp.Err.JSON()}}, StructuredContent: body}
	}
	res := resp.Result
	if res == nil {
		res = &provider.Result{}
	}
	out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Text}}}
	if res.Content != nil {
		out.Content = res.Content // typed, as the backend sent it (text mode renders Text instead)
	}
	if res.Structured != nil {
		out.StructuredContent = res.Structured
	}
	return out
}

// jsonResult renders a meta-tool's own answer as JSON text plus structuredContent.
func jsonResult(v any) *sdk.CallToolResult {
	b, err := jsonscan.Marshal(v)
	if err != nil {
		return render(&pipeline.Response{Err: toolerr.New(toolerr.BackendError, "", "encoding result: %v", err)})
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: v}
}

func errorResult(e *toolerr.Error) *sdk.CallToolResult { return render(&pipeline.Response{Err: e}) }

// firstLine shortens a description to one line of at most n characters
// (no space before the ellipsis).
func firstLine(s string, n int) string {
	s = text.FirstLine(s)
	if utf8.RuneCountInString(s) > n {
		s = strings.TrimSpace(strings.TrimSuffix(text.Clip(s, n-1), text.Ellipsis)) + text.Ellipsis
	}
	return s
}

// userOf is the authenticated user of an HTTP call (the transport's
// identity, never the token); "" over stdio or without auth.
func userOf(mreq *sdk.CallToolRequest) string {
	if mreq.Extra != nil && mreq.Extra.TokenInfo != nil {
		return mreq.Extra.TokenInfo.UserID
	}
	return ""
}

// approvalSchema asks for a yes/no and, optionally, how long the yes lasts:
// "always allow this tool" is remembered by canonical name (docs/pins.md).
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "description": "Allow this call"},
		"remember": map[string]any{"type": "string", "enum": []string{"once", "session", "always"},
			"enumNames":   []string{"Only this call", "Always for this session", "Always allow this tool"},
			"description": "How long this answer holds", "default": "once"},
	},
	"required": []string{"approve"},
}

// approvalOf reads the person's answer; anything but an explicit accept
// with approve: true is a decline.
func approvalOf(res *sdk.ElicitResult) policy.Approval {
	if res == nil || res.Action != "accept" {
		return policy.Declined
	}
	if ok, _ := res.Content["approve"].(bool); !ok {
		return policy.Declined
	}
	switch res.Content["remember"] {
	case "session":
		return policy.ApprovedForSession
	case "always":
		return policy.ApprovedAlways
	}
	return policy.ApprovedOnce
}
