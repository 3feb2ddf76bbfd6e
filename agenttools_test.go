package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agenttools "github.com/agent-tools/agent-tools"
)

func noop(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "ok", nil }

func newRT(t *testing.T, o agenttools.Options) *agenttools.Runtime {
	t.Helper()
	rt, err := agenttools.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func start(t *testing.T, rt *agenttools.Runtime) {
	t.Helper()
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// must fails the test at once when a registration (or any other setup
// step) returns an error: what follows would test a runtime without it.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func code(err error) string {
	var te *agenttools.ToolError
	if errors.As(err, &te) {
		return te.Code
	}
	if err == nil {
		return ""
	}
	return "error: " + err.Error()
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    agenttools.Options
		want string
	}{
		{"both configs", agenttools.Options{ConfigFile: "x.yaml", ConfigYAML: []byte("mode: flat")}, "not both"},
		{"bad mode", agenttools.Options{Mode: "tree"}, "unknown mode"},
	} {
		if _, err := agenttools.New(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, want %q", tc.name, err, tc.want)
		}
	}
	rt := newRT(t, agenttools.Options{ConfigYAML: []byte("mode: [")})
	if err := rt.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "ConfigYAML") {
		t.Errorf("a broken ConfigYAML must fail Start with its position, got %v", err)
	}
}

func TestRegistrationErrors(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	if err := rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "create", Description: "Book."}, noop); err != nil {
		t.Fatal(err)
	}
	type in struct {
		N int `json:"n"`
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"duplicate", rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "create", Description: "Again."}, noop), "already registered"},
		{"dashed namespace normalises", rt.AddTool(&agenttools.Tool{Namespace: "ai-agents", Action: "list", Description: "X."}, noop), ""},
		{"camelCase action", rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "checkAvailability", Description: "C."}, noop), "snake_case"},
		{"dotted namespace", rt.AddTool(&agenttools.Tool{Namespace: "booking.v2", Action: "create", Description: "C."}, noop), "snake_case"},
		{"upper-case namespace", rt.AddTool(&agenttools.Tool{Namespace: "Booking", Action: "create", Description: "C."}, noop), "snake_case"},
		{"array schema", rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "list", Description: "L.", InputSchema: &jsonschema.Schema{Type: "array"}}, noop), "want \"object\""},
		{"array output schema", rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "list", Description: "L.", OutputSchema: &jsonschema.Schema{Type: "array"}}, noop), "output schema"},
		{"nil handler", rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "list", Description: "L."}, nil), "nil handler"},
		{"typed tool with a non-struct input", agenttools.AddTool(rt, &agenttools.Tool{Namespace: "booking", Action: "count", Description: "C."},
			func(context.Context, *agenttools.CallInfo, []string) (int, error) { return 0, nil }), "\"object\""},
		{"typed tool of a channel", agenttools.AddTool(rt, &agenttools.Tool{Namespace: "booking", Action: "chan", Description: "C."},
			func(context.Context, *agenttools.CallInfo, chan int) (int, error) { return 0, nil }), "input schema"},
		{"redeclared provider", rt.AddPlugin("booking", agenttools.PluginOptions{}), "already declared"},
		{"typed ok", agenttools.AddTool(rt, &agenttools.Tool{Namespace: "booking", Action: "sum", Description: "S."},
			func(_ context.Context, _ *agenttools.CallInfo, v in) (int, error) { return v.N, nil }), ""},
	} {
		if tc.want == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	start(t, rt)
	if err := rt.AddTool(&agenttools.Tool{Namespace: "late", Action: "x", Description: "X."}, noop); err == nil || !strings.Contains(err.Error(), "before Start") {
		t.Errorf("a new namespace after Start: %v", err)
	}
	// A tool added after Start in a known namespace is callable at once.
	if err := rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "late", Description: "Late."}, noop); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Call(context.Background(), "booking_late", map[string]any{agenttools.ConfirmArg: true}); err != nil {
		t.Fatalf("late tool: %v", err)
	}
	if _, err := rt.Call(context.Background(), "ai_agents_list", map[string]any{agenttools.ConfirmArg: true}); err != nil {
		t.Fatalf("dashes become underscores: %v", err)
	}
}

func TestHandlersThatMisbehave(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	must(t, rt.AddPlugin("bad", agenttools.PluginOptions{NoConfirm: true, Timeout: 50 * time.Millisecond}))
	release := make(chan struct{})
	defer close(release)
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "bad", Action: "panic", Description: "Panics."}, func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) {
		var m map[string]int
		m["x"] = 1 //nolint:staticcheck // SA5000: a runtime panic on purpose, the handler this test needs
		return nil, nil
	}))
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "bad", Action: "stuck", Description: "Ignores cancellation."}, func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) {
		<-release
		return "late", nil
	}))
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "bad", Action: "fails", Description: "Returns an error."}, func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) {
		return nil, fmt.Errorf("slot 09:00 is taken; call bad_list for free slots")
	}))
	type in struct {
		N int `json:"n"`
	}
	must(t, agenttools.AddTool(rt, &agenttools.Tool{Namespace: "bad", Action: "typed", Description: "T."},
		func(_ context.Context, _ *agenttools.CallInfo, v in) (in, error) { return v, nil }))
	start(t, rt)
	ctx := context.Background()

	_, err := rt.Call(ctx, "bad_panic", nil)
	if code(err) != "BACKEND_ERROR" || strings.Contains(err.Error(), "nil map") {
		t.Errorf("panic: %v (want BACKEND_ERROR without the panic value)", err)
	}
	_, err = rt.Call(ctx, "bad_stuck", nil)
	if code(err) != "TIMEOUT" {
		t.Errorf("stuck: %v", err)
	}
	_, err = rt.Call(ctx, "bad_fails", nil)
	if code(err) != "BACKEND_ERROR" || !strings.Contains(err.Error(), "slot 09:00 is taken") {
		t.Errorf("error: %v", err)
	}
	_, err = rt.Call(ctx, "bad_typed", map[string]any{"n": "three"})
	if code(err) != "INVALID_ARGUMENTS" {
		t.Errorf("schema validation: %v", err)
	}
	res, err := rt.Call(ctx, "bad_typed", map[string]any{"n": 3})
	if err != nil || res.Text != `{"n":3}` {
		t.Errorf("typed: %v %v", res, err)
	}
	_, err = rt.Call(ctx, "bad_nope", nil)
	if code(err) != "UNKNOWN_TOOL" {
		t.Errorf("unknown: %v", err)
	}
}

func TestSetEnabledErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent-tools.yaml")
	must(t, os.WriteFile(cfg, []byte("providers:\n  - id: up\n    kind: mcp\n    enabled: false\n    url: https://example.invalid/mcp\n    headers: {Authorization: \"Bearer ${AT_TEST_UNSET_TOKEN}\"}\n"), 0o600))
	rt := newRT(t, agenttools.Options{ConfigFile: cfg, LookupEnv: func(string) (string, bool) { return "", false }})
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "a", Description: "A."}, noop))
	ctx := context.Background()
	if err := rt.SetEnabled(ctx, "svc", false); !errors.Is(err, agenttools.ErrNotStarted) {
		t.Errorf("before Start: %v", err)
	}
	start(t, rt)
	if err := rt.SetEnabled(ctx, "nope", true); !errors.Is(err, agenttools.ErrUnknownProvider) {
		t.Errorf("unknown: %v", err)
	}
	err := rt.SetEnabled(ctx, "up", true)
	if err == nil || !strings.Contains(err.Error(), "AT_TEST_UNSET_TOKEN") {
		t.Errorf("unresolved ${VAR}: %v", err)
	}
	if err := rt.SetEnabled(ctx, "up", false); err != nil {
		t.Errorf("disabling the unbuildable one is fine: %v", err)
	}
}

// A call racing a disable either runs whole or gets PROVIDER_UNAVAILABLE
// (or UNKNOWN_TOOL once the name is gone from a fresh generation); a
// handler that started always finishes.
func TestCallsRacingToggles(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	must(t, rt.AddPlugin("svc", agenttools.PluginOptions{NoConfirm: true}))
	var started, finished atomic.Int64
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "work", Description: "Work."}, func(ctx context.Context, _ *agenttools.CallInfo, _ json.RawMessage) (any, error) {
		started.Add(1)
		defer finished.Add(1)
		return "done", nil
	}))
	start(t, rt)
	ctx := context.Background()
	var wg sync.WaitGroup
	var ok, unavailable atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := rt.NewSession(agenttools.SessionOptions{ID: fmt.Sprint("w", w)})
			defer s.Close()
			for i := range 200 {
				// Distinct arguments: the loop guard would rightly refuse a
				// call that failed the same way five times.
				res, err := s.Call(ctx, "svc_work", map[string]any{"i": i})
				switch code(err) {
				case "":
					if res.Text != "done" {
						t.Errorf("half a result: %q", res.Text)
					}
					ok.Add(1)
				case "PROVIDER_UNAVAILABLE":
					unavailable.Add(1)
				default:
					t.Errorf("unexpected: %v", err)
				}
			}
		}()
	}
	for g := range 2 { // two control panels toggling at once
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if err := rt.SetEnabled(ctx, "svc", (i+g)%2 == 1); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if started.Load() != finished.Load() || started.Load() != ok.Load() {
		t.Fatalf("started %d, finished %d, ok %d: a call half-ran", started.Load(), finished.Load(), ok.Load())
	}
	if ok.Load()+unavailable.Load() != 800 {
		t.Fatalf("ok %d + unavailable %d != 800", ok.Load(), unavailable.Load())
	}
}

// SetEnabled reaches an MCP client (list_changed, tools/list; a
// 2026-07-28 one, listening on subscriptions/listen) and an in-process
// session (ToolsChanged, Tools) at once; discovery follows.
func TestToggleNotifiesEverySession(t *testing.T) {
	rt := newRT(t, agenttools.Options{Mode: "flat"})
	must(t, rt.AddPlugin("clients", agenttools.PluginOptions{Description: "Clients of the service.", ReadOnly: []string{"list"}}))
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "clients", Action: "list", Description: "List the service's clients."}, noop))
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "create", Description: "Book a slot."}, noop))
	start(t, rt)
	srv := httptest.NewServer(rt.Handler())
	defer srv.Close()
	ctx := context.Background()
	changed := make(chan struct{}, 8)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() != "" { // no session: list_changed comes on its subscriptions/listen stream
		t.Fatalf("a 2026-07-28 client got session %q", cs.ID())
	}
	in := rt.NewSession(agenttools.SessionOptions{})
	defer in.Close()
	names := func() string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, tl := range res.Tools {
			n = append(n, tl.Name)
		}
		return strings.Join(n, " ")
	}
	if got := names(); !strings.Contains(got, "clients_list") || !strings.Contains(got, "booking_create") {
		t.Fatalf("tools: %s", got)
	}
	for _, on := range []bool{false, true} {
		if err := rt.SetEnabled(ctx, "clients", on); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no list_changed over HTTP")
		}
		select {
		case <-in.ToolsChanged():
		case <-time.After(10 * time.Second):
			t.Fatal("no in-process change signal")
		}
		if got := names(); strings.Contains(got, "clients_list") != on {
			t.Fatalf("enabled=%v: tools/list = %s", on, got)
		}
		tools, _ := in.Tools()
		listed := false
		for _, tl := range tools {
			listed = listed || tl.Name == "clients_list"
		}
		if listed != on {
			t.Fatalf("enabled=%v: in-process Tools lists it: %v", on, listed)
		}
	}
}

// A person's "always allow" through elicitation is remembered by canonical
// name in the store next to the config; the next call does not ask.
// elicitingVersion is the protocol version of the clients that answer
// confirmations by elicitation: a session version, where the server asks
// the client in the middle of a call (2026-07-28 has no session to ask on;
// see docs/protocol.md).
var elicitingVersion = &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

func TestElicitationAlwaysAllow(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "decisions.json")
	rt := newRT(t, agenttools.Options{Mode: "flat", DecisionsFile: store})
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "cancel", Description: "Cancel a booking."}, noop))
	start(t, rt)
	srv := httptest.NewServer(rt.Handler())
	defer srv.Close()
	ctx := context.Background()
	var asked atomic.Int64
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "remember": "always"}}, nil
		},
	}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, elicitingVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 2 {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "booking_cancel", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
	}
	if asked.Load() != 1 {
		t.Fatalf("asked %d times, want 1", asked.Load())
	}
	b, _ := os.ReadFile(store)
	if !strings.Contains(string(b), `"tool": "booking_cancel"`) || !strings.Contains(string(b), `"provider": "booking"`) {
		t.Fatalf("store: %s", b)
	}
	// In-process, another session: the decision holds there too.
	if _, err := rt.Call(ctx, "booking_cancel", nil); err != nil {
		t.Fatalf("in-process after always: %v", err)
	}
}

// At 2026-07-28 there is no session to ask the client on: a client that
// can elicit is not asked (the runtime does not send input requests yet,
// docs/protocol.md) and gets the agent's confirmation instead, which works.
func TestElicitationAt20260728FallsBackToTheAgent(t *testing.T) {
	rt := newRT(t, agenttools.Options{Mode: "flat"})
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "cancel", Description: "Cancel a booking."}, noop))
	start(t, rt)
	srv := httptest.NewServer(rt.Handler())
	defer srv.Close()
	ctx := context.Background()
	var asked atomic.Int64
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "booking_cancel", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "CONFIRMATION_REQUIRED") {
		t.Fatalf("unconfirmed call: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "booking_cancel", Arguments: map[string]any{"agent_tools_confirm": true}})
	if err != nil || res.IsError {
		t.Fatalf("confirmed by the agent: %v %+v", err, res)
	}
	if asked.Load() != 0 {
		t.Errorf("the client was asked %d times", asked.Load())
	}
}

func TestCorruptDecisionStoreStarts(t *testing.T) {
	store := filepath.Join(t.TempDir(), "decisions.json")
	must(t, os.WriteFile(store, []byte("\x00garbage"), 0o600))
	rt := newRT(t, agenttools.Options{DecisionsFile: store})
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "write", Description: "Write."}, noop))
	start(t, rt)
	if _, err := rt.Call(context.Background(), "svc_write", nil); code(err) != "CONFIRMATION_REQUIRED" {
		t.Fatalf("a corrupt store must not allow anything: %v", err)
	}
}

func TestInProcessConfirmAndCaller(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	var got agenttools.CallInfo
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "write", Description: "Write."}, func(_ context.Context, c *agenttools.CallInfo, _ json.RawMessage) (any, error) {
		got = *c
		return map[string]any{"written": true}, nil
	}))
	start(t, rt)
	var asked []string
	s := rt.NewSession(agenttools.SessionOptions{ID: "panel-1", Client: "panel", User: "ada",
		Confirm: func(_ context.Context, msg string) (agenttools.Approval, error) {
			asked = append(asked, msg)
			return agenttools.ApprovedForSession, nil
		}})
	defer s.Close()
	for range 2 {
		res, err := s.Call(context.Background(), "svc_write", json.RawMessage(`{}`))
		if err != nil || res.Text != `{"written":true}` {
			t.Fatalf("call: %v %v", res, err)
		}
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "svc_write") {
		t.Fatalf("asked %q", asked)
	}
	if got.Tool != "svc_write" || got.Session != "panel-1" || got.Client != "panel" || got.User != "ada" {
		t.Fatalf("CallInfo = %+v", got)
	}
	other := rt.NewSession(agenttools.SessionOptions{})
	defer other.Close()
	if _, err := other.Call(context.Background(), "svc_write", nil); code(err) != "CONFIRMATION_REQUIRED" {
		t.Fatalf("a session decision must not leak to another session: %v", err)
	}
}

// Remembered decisions are applied by the one policy step, so every
// exposure mode honours them ("for this session" here).
func TestDecisionsInEveryMode(t *testing.T) {
	for _, tc := range []struct {
		mode, tool string
		args       map[string]any
	}{
		{"flat", "booking_cancel", map[string]any{}},
		{"progressive", "agent_tools_booking_call", map[string]any{"toolName": "booking_cancel", "arguments": map[string]any{}}},
		{"search", "agent_tools_call", map[string]any{"tool": "booking_cancel", "arguments": map[string]any{}}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			rt := newRT(t, agenttools.Options{Mode: tc.mode})
			must(t, rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "cancel", Description: "Cancel a booking."}, noop))
			start(t, rt)
			srv := httptest.NewServer(rt.Handler())
			defer srv.Close()
			ctx := context.Background()
			var asked atomic.Int64
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, &sdk.ClientOptions{
				ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked.Add(1)
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "remember": "session"}}, nil
				},
			}).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, elicitingVersion)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for range 3 {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil || res.IsError {
					t.Fatalf("call: %v %+v", err, res.Content)
				}
			}
			if asked.Load() != 1 {
				t.Fatalf("asked %d times, want 1", asked.Load())
			}
			// Another session (in-process) is asked again: nothing was persisted.
			if _, err := rt.Call(ctx, "booking_cancel", nil); code(err) != "CONFIRMATION_REQUIRED" {
				t.Fatalf("a session decision leaked: %v", err)
			}
		})
	}
}

// Handler applies the config's server.http auth, and handlers learn who
// called (the transport's identity, never the token).
func TestHandlerAuthAndCaller(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "SVC_TOKEN" {
			return "tok-123456", true
		}
		return "", false
	}
	rt := newRT(t, agenttools.Options{Mode: "flat", LookupEnv: env,
		ConfigYAML: []byte("server:\n  http:\n    tokens: [\"${SVC_TOKEN}\"]\n")})
	must(t, rt.AddPlugin("svc", agenttools.PluginOptions{ReadOnly: []string{"whoami"}}))
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "whoami", Description: "Who is calling."}, func(_ context.Context, c *agenttools.CallInfo, _ json.RawMessage) (any, error) {
		return c.User + " " + c.Client, nil
	}))
	start(t, rt)
	srv := httptest.NewServer(rt.Handler())
	defer srv.Close()
	ctx := context.Background()
	connect := func(tok string) (*sdk.ClientSession, error) {
		hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok)
			return http.DefaultTransport.RoundTrip(r)
		})}
		return sdk.NewClient(&sdk.Implementation{Name: "caller-test"}, nil).
			Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	}
	if _, err := connect("wrong"); err == nil {
		t.Fatal("a wrong token connected")
	}
	cs, err := connect("tok-123456")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "svc_whoami"})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.HasPrefix(text, "token:") || !strings.HasSuffix(text, " caller-test") || strings.Contains(text, "tok-123456") {
		t.Fatalf("caller = %q", text)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestLifecycle(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "a", Description: "A."}, noop))
	rec := httptest.NewRecorder()
	rt.Handler().ServeHTTP(rec, httptest.NewRequest("POST", "/mcp", strings.NewReader("{}")))
	if rec.Code != 503 {
		t.Errorf("Handler before Start: %d", rec.Code)
	}
	if _, err := rt.Call(context.Background(), "svc_a", nil); !errors.Is(err, agenttools.ErrNotStarted) {
		t.Errorf("Call before Start: %v", err)
	}
	start(t, rt)
	if err := rt.Start(context.Background()); err == nil {
		t.Error("Start twice must fail")
	}
	s := rt.NewSession(agenttools.SessionOptions{})
	s.Close()
	if _, err := s.Call(context.Background(), "svc_a", nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Call on a closed session: %v", err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Call(context.Background(), "svc_a", nil); !errors.Is(err, agenttools.ErrNotStarted) {
		t.Errorf("Call after Close: %v", err)
	}
}

// TestEmbedderServesOnlyWhatItNames: the repository's scripts and prompts
// that the binary serves by default are not published by an embedding
// program unless its config names them (a booking service run from a
// checkout must not serve that checkout's test/lint/bench scripts).
func TestEmbedderServesOnlyWhatItNames(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, ".agents", "tools", "wipe")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\n# @description Wipe everything.\necho wiped\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfgFile := func(body string) string {
		p := filepath.Join(dir, fmt.Sprintf("cfg-%d.yaml", len(body)))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name      string
		o         agenttools.Options
		wantLocal bool
		wantBuilt bool // runtime_status and execute_javascript
	}{
		{"no config", agenttools.Options{}, false, false},
		{"built-ins asked for", agenttools.Options{BuiltIns: true}, false, true},
		{"ConfigYAML without local", agenttools.Options{ConfigYAML: []byte("mode: flat\n")}, false, false},
		{"ConfigFile without local", agenttools.Options{ConfigFile: cfgFile("mode: flat\n")}, false, false},
		{"ConfigYAML naming local", agenttools.Options{ConfigYAML: []byte("local:\n  requireConfirm: true\n")}, true, false},
		{"ConfigFile naming local", agenttools.Options{ConfigFile: cfgFile("local: {dir: .agents/tools}\n")}, true, false},
		{"local named but disabled", agenttools.Options{ConfigYAML: []byte("local: {enabled: false}\n")}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.ProjectDir = dir
			rt := newRT(t, tc.o)
			if err := rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "create", Description: "Book."}, noop); err != nil {
				t.Fatal(err)
			}
			start(t, rt)
			tools, err := rt.NewSession(agenttools.SessionOptions{}).Tools()
			if err != nil {
				t.Fatal(err)
			}
			var local, built, booking bool
			for _, tl := range tools {
				local = local || tl.Provider == "local"
				built = built || tl.Provider == "builtin"
				booking = booking || tl.Name == "booking_create"
			}
			if local != tc.wantLocal || built != tc.wantBuilt || !booking {
				t.Errorf("local scripts served = %v (want %v), built-ins = %v (want %v), registered tool served = %v; tools: %v",
					local, tc.wantLocal, built, tc.wantBuilt, booking, tools)
			}
			_, err = rt.Call(context.Background(), "wipe", map[string]any{agenttools.ConfirmArg: true})
			if !tc.wantLocal && code(err) != "UNKNOWN_TOOL" {
				t.Errorf("calling an unnamed script: %v, want UNKNOWN_TOOL", err)
			}
		})
	}
}

// TestInProcessRetryAsTaught: the retry a CONFIRMATION_REQUIRED error
// teaches an in-process caller (its Body's retry.arguments) confirms the
// call in every policy.confirm mode that lets an agent confirm, the
// token included; a confirmation of the wrong type teaches rather than
// being read as "not confirmed".
func TestInProcessRetryAsTaught(t *testing.T) {
	for _, mode := range []string{"agent", "token"} {
		t.Run(mode, func(t *testing.T) {
			rt := newRT(t, agenttools.Options{ConfigYAML: []byte("policy: {confirm: " + mode + "}\n")})
			var runs atomic.Int32
			must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "write", Description: "Write."}, func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) {
				runs.Add(1)
				return "written", nil
			}))
			start(t, rt)
			ctx := context.Background()
			_, err := rt.Call(ctx, "svc_write", map[string]any{"n": 1})
			var te *agenttools.ToolError
			if !errors.As(err, &te) || te.Code != "CONFIRMATION_REQUIRED" {
				t.Fatalf("first call: %v", err)
			}
			retry, _ := te.Body["error"].(map[string]any)["retry"].(map[string]any)
			if retry["tool"] != "svc_write" {
				t.Fatalf("retry = %v", retry)
			}
			res, err := rt.Call(ctx, "svc_write", retry["arguments"])
			if err != nil || res.Text != "written" || runs.Load() != 1 {
				t.Fatalf("the taught retry %v: %v %v (runs %d)", retry["arguments"], res, err, runs.Load())
			}
			_, err = rt.Call(ctx, "svc_write", map[string]any{"n": 1, agenttools.ConfirmArg: 7})
			if code(err) != "INVALID_ARGUMENTS" || runs.Load() != 1 {
				t.Errorf("a confirmation of the wrong type: %v (runs %d)", err, runs.Load())
			}
		})
	}
}

// TestInProcessMissHints: an in-process caller that names a tool the way
// another mode or scheme spells it gets the same teaching as MCP and CLI.
func TestInProcessMissHints(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "read", Description: "Read."}, noop))
	start(t, rt)
	_, err := rt.Call(context.Background(), "svc_raed", nil)
	var te *agenttools.ToolError
	if !errors.As(err, &te) || te.Code != "UNKNOWN_TOOL" {
		t.Fatalf("%v", err)
	}
	if dym, _ := te.Body["error"].(map[string]any)["did_you_mean"].([]string); !slices.Contains(dym, "svc_read") {
		t.Errorf("did_you_mean = %v", te.Body)
	}
}

// A handler answers with content blocks (an image beside its caption):
// the model reads them typed, an in-process caller gets them back, and the
// text stays the words for the text mode and scripts.
func TestHandlerAnswersWithContent(t *testing.T) {
	rt := newRT(t, agenttools.Options{Mode: "flat"})
	dot := []byte("\x89PNG\r\n\x1a\nreddot")
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "chart", Action: "draw", Description: "Draw a chart.", ReadOnly: true},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) {
			return &agenttools.Result{Text: "a red dot [image/png]", Content: []sdk.Content{
				&sdk.TextContent{Text: "a red dot"}, &sdk.ImageContent{MIMEType: "image/png", Data: dot}}}, nil
		}))
	start(t, rt)
	srv := httptest.NewServer(rt.Handler())
	defer srv.Close()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "chart_draw", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("call: %v %+v", err, res)
	}
	if img, ok := res.Content[1].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != string(dot) {
		t.Fatalf("the image did not arrive as an image: %#v", res.Content[1])
	}
	in, err := rt.Call(ctx, "chart_draw", map[string]any{})
	if err != nil || len(in.Content) != 2 || in.Text != "a red dot [image/png]" {
		t.Fatalf("in process: %v %+v", err, in)
	}
}
