package passthrough_test

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/passthrough"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// upstream is an in-memory MCP server standing for a passthrough provider's
// upstream, with what the tests observe of it.
type upstream struct {
	server *sdk.Server

	mu          sync.Mutex
	tokens      []any // progress tokens the upstream saw
	cancelled   bool  // the slow tool saw its context end
	subscribed  []string
	levels      []sdk.LoggingLevel
	sessions    atomic.Int32 // sessions connected
	slowStarted chan struct{}
}

type nameArg struct {
	Name string `json:"name,omitempty"`
}

func newUpstream() *upstream { return newUpstreamPaged(0) }

func newUpstreamPaged(pageSize int) *upstream {
	u := &upstream{slowStarted: make(chan struct{}, 4)}
	s := sdk.NewServer(&sdk.Implementation{Name: "upstream", Version: "1", Description: "The test upstream.", WebsiteURL: "https://upstream.example.test"}, &sdk.ServerOptions{
		PageSize:     pageSize,
		Instructions: "Upstream says: be nice.",
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{req.Params.Ref.Name + ":" + req.Params.Argument.Value + "-done"}}}, nil
		},
		SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
			u.mu.Lock()
			u.subscribed = append(u.subscribed, req.Params.URI)
			u.mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the name."}, func(_ context.Context, _ *sdk.CallToolRequest, a nameArg) (*sdk.CallToolResult, any, error) {
		return text("echo " + a.Name), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "meta", Description: "Answers with the _meta it was called with."}, func(_ context.Context, req *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
		b, err := json.Marshal(req.Params.Meta)
		return text(string(b)), nil, err
	})
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "An image and a resource."}, func(context.Context, *sdk.CallToolRequest, any) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://x", MIMEType: "text/plain", Text: "x"}},
		}, StructuredContent: map[string]any{"ok": true}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fails as a tool."}, func(context.Context, *sdk.CallToolRequest, any) (*sdk.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("upstream failure text")
	})
	sdk.AddTool(s, &sdk.Tool{Name: "progress", Description: "Reports progress."}, func(ctx context.Context, req *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		u.mu.Lock()
		u.tokens = append(u.tokens, tok)
		u.mu.Unlock()
		for i := 1; i <= 3; i++ {
			if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3}); err != nil {
				return nil, nil, err
			}
		}
		time.Sleep(20 * time.Millisecond) // let the notifications overtake the result
		return text("done"), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "log", Description: "Logs three messages."}, func(ctx context.Context, req *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
		for i := range 3 {
			if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("line %d", i)}); err != nil {
				return nil, nil, err
			}
		}
		if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "debug", Data: "below the level"}); err != nil {
			return nil, nil, err
		}
		time.Sleep(20 * time.Millisecond)
		return text("logged"), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Asks the client."}, func(ctx context.Context, req *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
		var parts []string
		msg, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, nil, fmt.Errorf("sampling: %w", err)
		}
		parts = append(parts, "sampled="+msg.Content.(*sdk.TextContent).Text+"/"+msg.Model)
		el, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "who?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, fmt.Errorf("elicit: %w", err)
		}
		parts = append(parts, fmt.Sprintf("elicited=%s/%v", el.Action, el.Content["name"]))
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("roots: %w", err)
		}
		for _, r := range roots.Roots {
			parts = append(parts, "root="+r.URI)
		}
		return text(strings.Join(parts, " ")), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Waits until cancelled."}, func(ctx context.Context, _ *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
		u.slowStarted <- struct{}{}
		select {
		case <-ctx.Done():
			u.mu.Lock()
			u.cancelled = true
			u.mu.Unlock()
			return nil, nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return text("not cancelled"), nil, nil
		}
	})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greets.", Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	s.AddResource(&sdk.Resource{Name: "a", URI: "test://a", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "content of a"}}}, nil
	})
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "t", URITemplate: "test://t/{id}"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "template " + strings.TrimPrefix(req.Params.URI, "test://t/")}}}, nil
	})
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if p, ok := req.GetParams().(*sdk.SetLoggingLevelParams); ok && method == "logging/setLevel" {
				u.mu.Lock()
				u.levels = append(u.levels, p.Level)
				u.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	u.server = s
	return u
}

// connect connects a client to the upstream in memory.
func (u *upstream) connect(ctx context.Context, c *sdk.Client, sopts *sdk.ClientSessionOptions) (*sdk.ClientSession, error) {
	ct, st := sdk.NewInMemoryTransports()
	ss, err := u.server.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	u.sessions.Add(1)
	go func() { _ = ss.Wait(); u.sessions.Add(-1) }() // how the session ended does not matter, only that it did
	return c.Connect(ctx, ct, sopts)
}

// upProvider is a provider backed by upstream, implementing what the facade
// needs of provider/mcp's: a shared session, and separate ones on demand.
type upProvider struct {
	info   catalog.ProviderInfo
	up     *upstream
	shared *sdk.ClientSession
	opened atomic.Int32
}

var _ passthrough.Upstream = (*upProvider)(nil)

func newUpProvider(t *testing.T, info catalog.ProviderInfo, u *upstream) *upProvider {
	t.Helper()
	cs, err := u.connect(context.Background(), sdk.NewClient(&sdk.Implementation{Name: "shared"}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &upProvider{info: info, up: u, shared: cs}
}

func (p *upProvider) Info() catalog.ProviderInfo { return p.info }

func (p *upProvider) Tools(ctx context.Context) ([]catalog.Tool, error) {
	res, err := p.shared.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []catalog.Tool
	for _, t := range res.Tools {
		schema, _ := json.Marshal(t.InputSchema)
		out = append(out, catalog.Tool{Provider: p.info.ID, Name: t.Name, Description: t.Description, InputSchema: schema, ReadOnly: t.Name != "echo"})
	}
	return out, nil
}

func (p *upProvider) Call(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	return p.CallValues(ctx, tool, args, provider.Values{})
}

func (p *upProvider) CallValues(ctx context.Context, tool catalog.Tool, args json.RawMessage, v provider.Values) (*provider.Result, error) {
	cs := p.shared
	params := &sdk.CallToolParams{Name: tool.Name, Arguments: args}
	b := v.Forward
	if b != nil && b.Provider != p.info.ID {
		b = nil
	}
	if b != nil {
		var err error
		if cs, err = b.Session(ctx); err != nil {
			return nil, err
		}
		params.Meta = b.Meta
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, err
	}
	if b != nil {
		b.Raw(res)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return &provider.Result{Text: strings.Join(text, "\n"), IsError: res.IsError}, nil
}

func (p *upProvider) Session(context.Context) (*sdk.ClientSession, error) { return p.shared, nil }

func (p *upProvider) UpstreamPrompts() []*sdk.Prompt {
	res, err := p.shared.ListPrompts(context.Background(), nil)
	if err != nil {
		return nil
	}
	return res.Prompts
}

func (p *upProvider) UpstreamInit(context.Context) *sdk.InitializeResult {
	return p.shared.InitializeResult()
}

func (p *upProvider) OpenSession(ctx context.Context, opts *sdk.ClientOptions, sopts *sdk.ClientSessionOptions, setup func(*sdk.Client)) (*sdk.ClientSession, error) {
	p.opened.Add(1)
	c := sdk.NewClient(&sdk.Implementation{Name: "passthrough"}, opts)
	if setup != nil {
		setup(c)
	}
	return p.up.connect(ctx, c, sopts)
}

// ptHarness is a flat-mode facade in front of a passthrough provider (bare
// names) and a prefixed provider backed by another upstream.
type ptHarness struct {
	t    *testing.T
	up   *upstream
	prov *upProvider
	pre  *upProvider
	fac  *facade.Facade
}

func newPTHarness(t *testing.T, requireConfirm bool) *ptHarness {
	t.Helper()
	return newPTHarnessWith(t, requireConfirm, policy.Rules{}, nil)
}

// newPTHarnessWith is newPTHarness with policy rules and an audit log.
func newPTHarnessWith(t *testing.T, requireConfirm bool, rules policy.Rules, audit io.Writer) *ptHarness {
	t.Helper()
	u := newUpstream()
	prov := newUpProvider(t, catalog.ProviderInfo{ID: "up", Kind: "mcp", Description: "Upstream", HostLocal: true, RequireConfirm: requireConfirm}, u)
	pre := newUpProvider(t, catalog.ProviderInfo{ID: "pre", Kind: "mcp", Description: "Prefixed upstream", RequireConfirm: true}, newUpstream())
	reg := registry.New(nil)
	for _, p := range []provider.Provider{prov, pre} {
		if err := reg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: rules, AuditTo: audit, Guard: policy.NewLoopGuard(), Execute: pipeline.ExecuteOptions{DefaultTimeout: 5 * time.Second}})
	fac := facade.New(reg, run, facade.Options{Mode: facade.Flat, Version: "test", Rules: rules})
	reg.OnChange(fac.Sync)
	reg.Refresh(context.Background())
	fac.Sync()
	return &ptHarness{t: t, up: u, prov: prov, pre: pre, fac: fac}
}

// client records what the facade relays to one downstream client.
type client struct {
	cs       *sdk.ClientSession
	ss       *sdk.ServerSession
	mu       sync.Mutex
	progress []*sdk.ProgressNotificationParams
	logs     []*sdk.LoggingMessageParams
	updated  []string
	sampled  int
}

// connect connects a client speaking the protocol with sessions (what the
// passthrough relays for), unless version says otherwise.
func (h *ptHarness) connect(name string, version ...string) *client {
	h.t.Helper()
	v := "2025-11-25"
	if len(version) > 0 {
		v = version[0]
	}
	c := &client{}
	opts := &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			c.mu.Lock()
			c.sampled++
			c.mu.Unlock()
			return &sdk.CreateMessageResult{Role: "assistant", Model: name + "-model", Content: &sdk.TextContent{Text: "from " + name}}, nil
		},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params)
			c.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, req.Params)
			c.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			c.mu.Lock()
			c.updated = append(c.updated, req.Params.URI)
			c.mu.Unlock()
		},
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, opts)
	cl.AddRoots(&sdk.Root{URI: "file:///" + name})
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := h.fac.Server().Connect(ctx, st, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	cs, err := cl.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { cs.Close(); ss.Close() })
	c.cs, c.ss = cs, ss
	return c
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func textOf(res *sdk.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

func TestPassthroughInitializeAdvertisesUpstream(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	ir := c.cs.InitializeResult()
	caps := ir.Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged {
		t.Errorf("resources capability = %+v, want subscribe and listChanged", caps.Resources)
	}
	if caps.Logging == nil || caps.Completions == nil || caps.Prompts == nil || caps.Tools == nil {
		t.Errorf("capabilities = %+v, want tools, prompts, logging, completions", caps)
	}
	if !strings.Contains(ir.Instructions, "Upstream says: be nice.") {
		t.Errorf("instructions lack the upstream's: %q", ir.Instructions)
	}
	// The forwarded upstream's description and website (docs/providers/mcp.md);
	// the name stays the runtime's.
	if si := ir.ServerInfo; si.Name != "agent-tools" || si.Description != "The test upstream." || si.WebsiteURL != "https://upstream.example.test" {
		t.Errorf("serverInfo = %+v", si)
	}
	if again := h.connect("b").cs.InitializeResult().ServerInfo; again.Description != "The test upstream." {
		t.Errorf("second session's serverInfo = %+v", again)
	}
	if n := h.prov.opened.Load(); n != 0 {
		t.Errorf("initialize opened %d passthrough sessions; they open on first use", n)
	}
}

func TestPassthroughToolResultsVerbatim(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	tools, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"echo", "image", "ask", "pre_echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	res := callTool(t, c.cs, "image", map[string]any{})
	if len(res.Content) != 2 {
		t.Fatalf("image: content = %d blocks, want the upstream's 2", len(res.Content))
	}
	if img, ok := res.Content[0].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != "\x89PNG" {
		t.Errorf("image block = %#v", res.Content[0])
	}
	if er, ok := res.Content[1].(*sdk.EmbeddedResource); !ok || er.Resource.Text != "x" {
		t.Errorf("resource block = %#v", res.Content[1])
	}
	if m, _ := res.StructuredContent.(map[string]any); m["ok"] != true {
		t.Errorf("structuredContent = %v", res.StructuredContent)
	}
	res = callTool(t, c.cs, "fail", map[string]any{})
	if !res.IsError || !strings.Contains(textOf(res), "upstream failure text") || strings.Contains(textOf(res), "BACKEND_ERROR") {
		t.Errorf("fail: the upstream's own error result should pass as it is: isError=%v %q", res.IsError, textOf(res))
	}
	// The prefixed provider is not forwarded: its results keep the runtime's shaping.
	if res := callTool(t, c.cs, "pre_image", map[string]any{}); len(res.Content) != 1 {
		t.Errorf("pre_image: %d blocks; a prefixed provider is not a passthrough", len(res.Content))
	}
}

// TestPassthroughMetaIsTheClients: a call's own _meta keys reach the
// upstream, but not the protocol's per-request keys (SEP-2575: protocol
// version, client info and capabilities), which describe the client's
// connection to the runtime; the runtime's session with the upstream sends
// its own (and the go-sdk does not overwrite keys already present).
func TestPassthroughMetaIsTheClients(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "meta", Arguments: map[string]any{}, Meta: sdk.Meta{
		"x.example/trace":                            "abc",
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "downstream", "version": "9"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"experimental": map[string]any{"downstream": map[string]any{}}},
		"io.modelcontextprotocol/logLevel":           "debug",
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(textOf(res)), &got); err != nil {
		t.Fatalf("meta tool answered %q: %v", textOf(res), err)
	}
	if got["x.example/trace"] != "abc" {
		t.Errorf("the call's own _meta key was not forwarded: %v", got)
	}
	for _, k := range []string{"io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/logLevel"} {
		if b, _ := json.Marshal(got[k]); strings.Contains(string(b), "downstream") || string(b) == `"debug"` {
			t.Errorf("the client's %s reached the upstream: %s", k, b)
		}
	}
}

func TestPassthroughPolicyStillApplies(t *testing.T) {
	h := newPTHarness(t, true) // echo is not read-only: it needs confirmation
	c := h.connect("a")
	res := callTool(t, c.cs, "echo", map[string]any{"name": "x"})
	if !res.IsError || !strings.Contains(textOf(res), "CONFIRMATION_REQUIRED") {
		t.Fatalf("unconfirmed mutating call: %q", textOf(res))
	}
	if n := h.prov.opened.Load(); n != 0 {
		t.Errorf("a refused call opened %d upstream sessions", n)
	}
	res = callTool(t, c.cs, "echo", map[string]any{"name": "x", facade.ConfirmArg: true})
	if res.IsError || textOf(res) != "echo x" {
		t.Errorf("confirmed call: %q", textOf(res))
	}
}

func TestPassthroughProgressBothWays(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	params := &sdk.CallToolParams{Name: "progress", Arguments: map[string]any{}}
	params.SetProgressToken("client-token")
	if _, err := c.cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "3 progress notifications", 5*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.progress) >= 3
	})
	c.mu.Lock()
	for i, p := range c.progress {
		if p.ProgressToken != "client-token" || p.Progress != float64(i+1) {
			t.Errorf("progress %d = %+v, want the client's token and increasing values", i, p)
		}
	}
	c.mu.Unlock()
	h.up.mu.Lock()
	defer h.up.mu.Unlock()
	if len(h.up.tokens) != 1 || h.up.tokens[0] == "client-token" || h.up.tokens[0] == nil {
		t.Errorf("upstream saw tokens %v, want one mapped token", h.up.tokens)
	}
}

func TestPassthroughRelaysRequestsToTheRightClient(t *testing.T) {
	h := newPTHarness(t, false)
	a, b := h.connect("a"), h.connect("b")
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i, c := range []*client{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = textOf(callTool(t, c.cs, "ask", map[string]any{}))
		}()
	}
	wg.Wait()
	for i, name := range []string{"a", "b"} {
		want := fmt.Sprintf("sampled=from %s/%s-model elicited=accept/%s root=file:///%s", name, name, name, name)
		if got[i] != want {
			t.Errorf("client %s: %q, want %q", name, got[i], want)
		}
	}
	if n := h.prov.opened.Load(); n != 2 {
		t.Errorf("passthrough sessions opened = %d, want one per client", n)
	}
}

func TestPassthroughLogging(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	ctx := context.Background()
	if err := c.cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	callTool(t, c.cs, "log", map[string]any{})
	testutil.WaitFor(t, "3 log messages", 5*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.logs) >= 3
	})
	time.Sleep(30 * time.Millisecond)
	c.mu.Lock()
	for _, l := range c.logs {
		if l.Level == "debug" {
			t.Errorf("a debug message passed the info level: %+v", l)
		}
	}
	c.mu.Unlock()
	// The level, set before the upstream session opened, was replayed to it;
	// a later change reaches the open session.
	if err := c.cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	h.up.mu.Lock()
	defer h.up.mu.Unlock()
	if !slices.Equal(h.up.levels, []sdk.LoggingLevel{"info", "error"}) {
		t.Errorf("upstream levels = %v, want [info error]", h.up.levels)
	}
}

func TestPassthroughPromptsAndCompletion(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	ctx := context.Background()
	res, err := c.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"greet", "pre_greet"}) {
		t.Fatalf("prompts = %v, want the passthrough's bare greet and the prefixed pre_greet", names)
	}
	for _, name := range names {
		got, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: map[string]string{"who": "Ada"}})
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		if tc := got.Messages[0].Content.(*sdk.TextContent); tc.Text != "hello Ada" {
			t.Errorf("get %s = %q", name, tc.Text)
		}
		comp, err := c.cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: name},
			Argument: sdk.CompleteParamsArgument{Name: "who", Value: "A"}})
		if err != nil {
			t.Fatalf("complete %s: %v", name, err)
		}
		if !slices.Equal(comp.Completion.Values, []string{"greet:A-done"}) {
			t.Errorf("complete %s = %v (the upstream must see its own prompt name)", name, comp.Completion.Values)
		}
	}
	if _, err := c.cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "nope"},
		Argument: sdk.CompleteParamsArgument{Name: "x", Value: "y"}}); err == nil {
		t.Error("completing an unknown prompt succeeded")
	}
}

func TestPassthroughResources(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	ctx := context.Background()
	list, err := c.cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != "test://a" {
		t.Fatalf("resources/list = %+v, %v", list, err)
	}
	tpl, err := c.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != "test://t/{id}" {
		t.Fatalf("templates/list = %+v, %v", tpl, err)
	}
	for uri, want := range map[string]string{"test://a": "content of a", "test://t/42": "template 42"} {
		got, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || got.Contents[0].Text != want {
			t.Errorf("read %s = %+v, %v", uri, got, err)
		}
	}
	if _, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://missing"}); err == nil {
		t.Error("reading a missing resource succeeded")
	}
	if err := c.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	if err := h.up.server.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "resources/updated", 5*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return slices.Contains(c.updated, "test://a")
	})
	if err := c.cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
}

func TestPassthroughCancellationReachesUpstream(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		done <- err
	}()
	<-h.up.slowStarted
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call succeeded")
	}
	testutil.WaitFor(t, "the upstream call to be cancelled", 5*time.Second, func() bool {
		h.up.mu.Lock()
		defer h.up.mu.Unlock()
		return h.up.cancelled
	})
}

func TestPassthroughSessionsEndWithTheClient(t *testing.T) {
	h := newPTHarness(t, false)
	base := h.up.sessions.Load() // the shared session
	c := h.connect("a")
	callTool(t, c.cs, "echo", map[string]any{"name": "x"})
	if n := h.up.sessions.Load(); n != base+1 {
		t.Fatalf("upstream sessions = %d, want %d", n, base+1)
	}
	c.cs.Close()
	testutil.WaitFor(t, "the passthrough session to close", 5*time.Second, func() bool { return h.up.sessions.Load() == base })
}

// A client of the sessionless protocol (2026-07-28) gets the upstream's
// tools, prompts and resources through the provider's shared session; there
// is nothing per session to keep.
func TestPassthroughSessionlessClient(t *testing.T) {
	h := newPTHarness(t, false)
	c := h.connect("a", "2026-07-28")
	caps := c.cs.InitializeResult().Capabilities
	if caps.Resources == nil || caps.Resources.Subscribe || caps.Logging != nil || caps.Completions == nil {
		t.Errorf("server/discover capabilities = %+v (resources %+v): want resources without subscribe, completions, no logging", caps, caps.Resources)
	}
	res := callTool(t, c.cs, "image", map[string]any{})
	if len(res.Content) != 2 {
		t.Errorf("image through the shared session: %d blocks", len(res.Content))
	}
	if got, err := c.cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "test://a"}); err != nil || got.Contents[0].Text != "content of a" {
		t.Errorf("read = %+v, %v", got, err)
	}
	if n := h.prov.opened.Load(); n != 0 {
		t.Errorf("a sessionless client opened %d upstream sessions", n)
	}
}

// Two passthrough providers: their resources are listed one after the other
// across pages (each upstream's own cursors inside ours), and a read goes to
// the upstream that listed the URI.
func TestPassthroughResourcesAcrossUpstreams(t *testing.T) {
	u1, u2 := newUpstreamPaged(1), newUpstreamPaged(1)
	u2.server.RemoveTools("echo", "image", "fail", "progress", "log", "ask", "slow") // no name clashes
	u2.server.AddResource(&sdk.Resource{Name: "b", URI: "test://b-only"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "only in the second"}}}, nil
	})
	reg := registry.New(nil)
	for i, u := range []*upstream{u1, u2} {
		id := fmt.Sprintf("up%d", i+1)
		if err := reg.Add(newUpProvider(t, catalog.ProviderInfo{ID: id, Kind: "mcp", HostLocal: true}, u)); err != nil {
			t.Fatal(err)
		}
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Guard: policy.NewLoopGuard(), Execute: pipeline.ExecuteOptions{DefaultTimeout: 5 * time.Second}})
	fac := facade.New(reg, run, facade.Options{Mode: facade.Flat})
	reg.Refresh(context.Background())
	fac.Sync()
	h := &ptHarness{t: t, fac: fac}
	c := h.connect("a")
	ctx := context.Background()

	var uris []string
	cursor, pages := "", 0
	for {
		res, err := c.cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" || pages > 10 {
			break
		}
	}
	if want := []string{"test://a", "test://a", "test://b-only"}; !slices.Equal(uris, want) {
		t.Errorf("resources across upstreams = %v (in %d pages), want %v", uris, pages, want)
	}
	got, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://b-only"})
	if err != nil || got.Contents[0].Text != "only in the second" {
		t.Errorf("read test://b-only = %+v, %v", got, err)
	}
	if _, err := c.cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: "not-a-cursor"}); err == nil {
		t.Error("a forged cursor was accepted")
	}
}
