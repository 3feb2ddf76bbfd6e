package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol versions the go-sdk client speaks, oldest first.
var protocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", PerRequestVersion}

// protocolServer is testMCPServer plus "whoami", which answers the session
// id and the authenticated user the call arrived with: what the pipeline
// keys the loop guard, confirmation tokens and remembered decisions on.
func protocolServer() *sdk.Server {
	s := testMCPServer(nil)
	s.AddTool(&sdk.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		user := ""
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			user = req.Extra.TokenInfo.UserID
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "session=" + req.Session.ID() + " user=" + user}}}, nil
	})
	return s
}

// TestProtocolVersionByEndpoint: the go-sdk client in every protocol
// version against every endpoint (the default /mcp, a profile's
// /mcp/p/<slug>, and both under Stateless), with a bearer token: the
// version is the one asked for, tools list and call, progress arrives,
// list_changed arrives where the protocol has a way to deliver it, and
// every call carries the caller's identity (with a session id exactly
// where a session exists). docs/protocol.md's table is this test.
func TestProtocolVersionByEndpoint(t *testing.T) {
	type endpoint struct {
		name      string
		stateless bool
		profile   bool
	}
	endpoints := []endpoint{{"default", false, false}, {"profile", false, true}, {"stateless", true, false}, {"stateless profile", true, true}}
	for _, ep := range endpoints {
		for _, v := range protocolVersions {
			t.Run(ep.name+"/"+v, func(t *testing.T) {
				t.Parallel()
				def, ops := protocolServer(), protocolServer()
				_, srv, _ := start(t, HTTPOptions{
					Server: def, Stateless: ep.stateless, Tokens: []string{"tok-alice"}, TokenNames: []string{"alice"},
					Profile:  func(slug string) (*sdk.Server, bool) { return ops, slug == "ops" },
					Profiles: func() []string { return []string{"ops"} },
				})
				url, served := srv.URL+MCPPath, def
				if ep.profile {
					url, served = url+"/p/ops", ops
				}
				changed := make(chan struct{}, 4)
				var progress atomic.Int32
				c := sdk.NewClient(&sdk.Implementation{Name: "go-client", Version: "1"}, &sdk.ClientOptions{
					ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
					ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { progress.Add(1) },
				})
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: bearerClient("tok-alice"), MaxRetries: -1},
					&sdk.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != v {
					t.Fatalf("negotiated %s, want %s", got, v)
				}
				perRequest := v >= PerRequestVersion
				if session := cs.ID() != ""; session != (!ep.stateless && !perRequest) {
					t.Errorf("session id %q: want one exactly for a session version on a session endpoint", cs.ID())
				}

				lt, err := cs.ListTools(ctx, nil)
				if err != nil || len(lt.Tools) != 3 {
					t.Fatalf("tools/list: %v %+v", err, lt)
				}
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi " + v}})
				if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "hi "+v {
					t.Fatalf("tools/call: %v %+v", err, res)
				}
				who, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				if want := "session=" + cs.ID() + " user=token:alice"; who.Content[0].(*sdk.TextContent).Text != want {
					t.Errorf("whoami = %q, want %q", who.Content[0].(*sdk.TextContent).Text, want)
				}
				p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 300}}
				p.SetProgressToken("p1")
				if _, err := cs.CallTool(ctx, p); err != nil {
					t.Fatal(err)
				}
				if progress.Load() == 0 {
					t.Error("no progress notification")
				}

				// list_changed: on the session's GET stream (session versions
				// on a session endpoint) or the subscriptions/listen stream
				// (per-request versions, on every endpoint). A session version
				// on a stateless endpoint has neither.
				wantChanged := perRequest || !ep.stateless
				served.AddTool(&sdk.Tool{Name: "fresh", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{}, nil
				})
				wait := 5 * time.Second
				if !wantChanged {
					wait = 300 * time.Millisecond
				}
				select {
				case <-changed:
					if !wantChanged {
						t.Error("list_changed arrived where the protocol has no stream for it")
					}
				case <-time.After(wait):
					if wantChanged {
						t.Error("no notifications/tools/list_changed")
					}
				}
				if lt, err := cs.ListTools(ctx, nil); err != nil || len(lt.Tools) != 4 {
					t.Fatalf("tools/list after the change: %v %+v", err, lt)
				}
				if !perRequest { // ping is gone from the per-request protocol
					if err := cs.Ping(ctx, nil); err != nil {
						t.Errorf("ping: %v", err)
					}
				}
			})
		}
	}
}

// perRequestPost posts one 2026-07-28 request: the version in the header
// and in the request's _meta, the method in Mcp-Method, no session.
func perRequestPost(t *testing.T, url, method, params string, hdr map[string]string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	h := map[string]string{"Mcp-Protocol-Version": PerRequestVersion, "Mcp-Method": method}
	for k, v := range hdr {
		h[k] = v
	}
	return postTo(t, url, body, h)
}

const perRequestMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// rpcError decodes a JSON-RPC error answer (a JSON body or one SSE event).
func rpcError(t *testing.T, body string) *jsonrpc.Error {
	t.Helper()
	if i := strings.Index(body, "data: "); i >= 0 {
		body = strings.TrimSpace(strings.SplitN(body[i+len("data: "):], "\n", 2)[0])
	}
	var m struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", body)
	}
	return m.Error
}

// TestPerRequestOnDefaultEndpoint: the case, on the wire. The
// default endpoint used to answer a 2026-07-28 request with 400
// "Mcp-Session-Id header is required"; it now serves it without a
// session, and still tells a session version's client to initialize.
func TestPerRequestOnDefaultEndpoint(t *testing.T) {
	h, srv, _ := start(t, HTTPOptions{})
	url := srv.URL + MCPPath

	resp := perRequestPost(t, url, "server/discover", `{`+perRequestMeta+`}`, nil)
	body := readBody(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(body, `"supportedVersions":["2026-07-28","2025-11-25"`) {
		t.Fatalf("server/discover: %d session %q: %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	resp = perRequestPost(t, url, "tools/list", `{`+perRequestMeta+`}`, nil)
	if body := readBody(t, resp); resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(body, `"name":"echo"`) {
		t.Fatalf("tools/list: %d: %s", resp.StatusCode, body)
	}
	resp = perRequestPost(t, url, "tools/call", `{"name":"echo","arguments":{"text":"no session"},`+perRequestMeta+`}`, map[string]string{"Mcp-Name": "echo"})
	if body := readBody(t, resp); resp.StatusCode != 200 || !strings.Contains(body, "no session") {
		t.Fatalf("tools/call: %d: %s", resp.StatusCode, body)
	}

	// The per-request protocol's own errors, not the session one: _meta
	// without the header, the header without _meta.
	resp = postTo(t, url, `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{`+perRequestMeta+`}}`, nil)
	if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || rpcError(t, body).Code != sdk.CodeHeaderMismatch {
		t.Errorf("_meta without the header: %d %s", resp.StatusCode, body)
	}
	resp = perRequestPost(t, url, "tools/list", `{}`, nil)
	if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || rpcError(t, body).Code != jsonrpc.CodeInvalidParams || strings.Contains(body, "Mcp-Session-Id") {
		t.Errorf("header without _meta: %d %s", resp.StatusCode, body)
	}
	// initialize does not exist in 2026-07-28.
	resp = perRequestPost(t, url, "initialize", `{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"t","version":"1"},`+perRequestMeta+`}`, nil)
	if body := readBody(t, resp); resp.Header.Get("Mcp-Session-Id") != "" || rpcError(t, body).Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("initialize at 2026-07-28: %d session %q %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	// GET has no meaning without a session: 405 as on a stateless server.
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", PerRequestVersion)
	g, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	g.Body.Close()
	if g.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET at 2026-07-28: %d", g.StatusCode)
	}

	// A session version without a session still gets the 400 saying what to do.
	resp = post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if body := readBody(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Mcp-Session-Id header is required") || !strings.Contains(body, PerRequestVersion) {
		t.Errorf("session version without a session: %d %s", resp.StatusCode, body)
	}
	// Sessions and per-request calls side by side on one URL.
	sid := initSession(t, srv.URL, nil)
	resp = post(t, srv.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	if body := readBody(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `"name":"echo"`) {
		t.Fatalf("session beside per-request calls: %d %s", resp.StatusCode, body)
	}
	// Per-request calls leave no session behind.
	deadline := time.Now().Add(2 * time.Second)
	for h.Sessions() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.Sessions(); n != 1 {
		t.Errorf("%d sessions, want only the initialized one", n)
	}
	// Draining: a per-request call is a new arrival (503, retry elsewhere);
	// a session's request is still served.
	h.draining.Store(true)
	resp = perRequestPost(t, url, "tools/list", `{`+perRequestMeta+`}`, nil)
	if body := readBody(t, resp); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("per-request call while draining: %d %s", resp.StatusCode, body)
	}
	resp = post(t, srv.URL, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	if body := readBody(t, resp); resp.StatusCode != 200 {
		t.Errorf("session request while draining: %d %s", resp.StatusCode, body)
	}
}

// TestPerRequestSameGuards: a 2026-07-28 request passes the same bearer
// auth, Host and Origin checks, rate limit buckets and profile lookup as a
// session's.
func TestPerRequestSameGuards(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{
		Tokens: []string{"tok-flood"}, RatePerSecond: 1, RateBurst: 4,
		Profile: func(string) (*sdk.Server, bool) { return nil, false }, Profiles: func() []string { return []string{"ops"} },
	})
	url := srv.URL + MCPPath
	list := `{` + perRequestMeta + `}`
	for _, tt := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"foreign origin", map[string]string{"Authorization": "Bearer tok-flood", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"foreign host", map[string]string{"Authorization": "Bearer tok-flood", "Host": "evil.example"}, http.StatusForbidden},
	} {
		resp := perRequestPost(t, url, "tools/list", list, tt.hdr)
		if body := readBody(t, resp); resp.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d: %s", tt.name, resp.StatusCode, tt.want, body)
		}
		if tt.want == http.StatusUnauthorized && !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: no WWW-Authenticate challenge", tt.name)
		}
	}
	resp := perRequestPost(t, url+"/p/nope", "tools/list", list, map[string]string{"Authorization": "Bearer tok-flood"})
	if body := readBody(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"profiles":["ops"]`) {
		t.Errorf("unknown profile: %d %s", resp.StatusCode, body)
	}
	// One bucket per identity, whichever protocol the requests speak.
	auth := map[string]string{"Authorization": "Bearer tok-flood"}
	limited := false
	for i := 0; i < 10 && !limited; i++ {
		resp := perRequestPost(t, url, "tools/list", list, auth)
		readBody(t, resp)
		limited = resp.StatusCode == http.StatusTooManyRequests
	}
	if !limited {
		t.Fatal("per-request calls were never rate limited")
	}
	resp = post(t, srv.URL, initBody, auth)
	if body := readBody(t, resp); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("initialize after the per-request flood: %d, want 429 (same bucket): %s", resp.StatusCode, body)
	}

	// A browser client's preflight may name the per-request headers.
	req, _ := http.NewRequest(http.MethodOptions, url, nil)
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "mcp-method, mcp-name, mcp-param-region, x-other")
	pf, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pf.Body.Close()
	allowed := pf.Header.Get("Access-Control-Allow-Headers")
	if pf.StatusCode != http.StatusNoContent || !strings.Contains(allowed, "Mcp-Method") || !strings.Contains(allowed, "Mcp-Name") || !strings.Contains(allowed, "mcp-param-region") || strings.Contains(allowed, "x-other") {
		t.Errorf("preflight: %d %q", pf.StatusCode, allowed)
	}
}

// TestPerRequestListen: subscriptions/listen on the default endpoint and a
// profile's stays open and carries list_changed of that endpoint's server
// only.
func TestPerRequestListen(t *testing.T) {
	def, ops := protocolServer(), protocolServer()
	h, srv, _ := start(t, HTTPOptions{Server: def, Profile: func(slug string) (*sdk.Server, bool) { return ops, slug == "ops" }})
	type client struct {
		cs      *sdk.ClientSession
		changed chan struct{}
	}
	open := func(url string) client {
		changed := make(chan struct{}, 4)
		c := sdk.NewClient(&sdk.Implementation{Name: "listener", Version: "1"}, &sdk.ClientOptions{
			ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
		})
		cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: PerRequestVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return client{cs, changed}
	}
	onDefault, onOps := open(srv.URL+MCPPath), open(srv.URL+MCPPath+"/p/ops")
	// The listen is one long POST on each endpoint; a change made before
	// the server has registered it is not delivered (nothing to deliver it
	// on), so each change is made again, with a new tool, until one arrives.
	changeUntilSeen := func(s *sdk.Server, c client, name string) {
		t.Helper()
		for i := range 20 {
			s.AddTool(&sdk.Tool{Name: fmt.Sprintf("%s_%d", name, i), InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
			select {
			case <-c.changed:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
		t.Fatalf("no list_changed for %s in 10 s", name)
	}
	changeUntilSeen(ops, onOps, "ops_only")
	select {
	case <-onDefault.changed:
		t.Error("the default endpoint's listener got the profile's list_changed")
	case <-time.After(200 * time.Millisecond):
	}
	changeUntilSeen(def, onDefault, "default_only")
	lt, err := onDefault.cs.ListTools(context.Background(), nil)
	if err != nil || !slices.ContainsFunc(lt.Tools, func(tl *sdk.Tool) bool { return strings.HasPrefix(tl.Name, "default_only_") }) ||
		slices.ContainsFunc(lt.Tools, func(tl *sdk.Tool) bool { return strings.HasPrefix(tl.Name, "ops_only_") }) {
		t.Fatalf("tools/list after the change: %v %+v", err, lt)
	}
	if h.Sessions() == 0 {
		t.Error("the default endpoint's listener holds no session object while it listens")
	}
}
