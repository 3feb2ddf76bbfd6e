package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
)

// TestHTTPBadInput: every class of bad request gets the right status and a
// clear message, and the server keeps serving the good session after them.
func TestHTTPBadInput(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{BodyLimit: 1024, AllowedOrigins: []string{"https://console.example.com"}, AllowedHosts: []string{"tools.example.com"}})
	sid := initSession(t, srv.URL, nil)
	sess := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range sess {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 2000) + `"}}}`
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		hdr    map[string]string
		chunk  bool // send without Content-Length
		status int
		want   string
	}{
		{"malformed json", "POST", MCPPath, `{"jsonrpc":"2.0",`, sess, false, 400, "malformed payload"},
		{"not json-rpc", "POST", MCPPath, `[1,2,3]`, sess, false, 400, ""},
		{"unknown method", "POST", MCPPath, `{"jsonrpc":"2.0","id":9,"method":"tools/destroy"}`, sess, false, 400, ""},
		{"empty body", "POST", MCPPath, ``, sess, false, 400, "non-empty body"},
		{"oversized body", "POST", MCPPath, big, sess, false, 413, "exceeds 1024 bytes"},
		{"oversized chunked body", "POST", MCPPath, big, sess, true, 413, "exceeds 1024 bytes"},
		{"wrong content type", "POST", MCPPath, list, with(map[string]string{"Content-Type": "text/plain"}), false, 415, "Content-Type must be 'application/json'"},
		{"wrong accept", "POST", MCPPath, list, with(map[string]string{"Accept": "text/html"}), false, 400, "Accept must contain"},
		{"forged session id", "POST", MCPPath, list, with(map[string]string{"Mcp-Session-Id": "FORGED123"}), false, 404, "session not found"},
		{"session id with a space", "POST", MCPPath, list, with(map[string]string{"Mcp-Session-Id": "a b"}), false, 400, "invalid Mcp-Session-Id"},
		{"session id not ASCII", "POST", MCPPath, list, with(map[string]string{"Mcp-Session-Id": "s\xc3\xa9ance"}), false, 400, "invalid Mcp-Session-Id"},
		{"get without session", "GET", MCPPath, "", map[string]string{"Accept": "text/event-stream"}, false, 400, "requires an Mcp-Session-Id"},
		{"get forged session", "GET", MCPPath, "", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "nope"}, false, 404, "session not found"},
		{"delete without session", "DELETE", MCPPath, "", nil, false, 400, "requires an Mcp-Session-Id"},
		{"delete forged session", "DELETE", MCPPath, "", map[string]string{"Mcp-Session-Id": "nope"}, false, 404, "session not found"},
		{"wrong method", "PUT", MCPPath, list, sess, false, 405, "Method Not Allowed"},
		{"unsupported protocol version", "POST", MCPPath, list, with(map[string]string{"Mcp-Protocol-Version": "1999-01-01"}), false, 400, "Unsupported protocol version"},
		{"forged origin", "POST", MCPPath, list, with(map[string]string{"Origin": "https://evil.example"}), false, 403, `Origin "https://evil.example" is not allowed`},
		{"null origin", "POST", MCPPath, list, with(map[string]string{"Origin": "null"}), false, 403, "is not allowed"},
		{"origin lookalike", "POST", MCPPath, list, with(map[string]string{"Origin": "http://localhost.evil.example"}), false, 403, "is not allowed"},
		{"forged host (DNS rebinding)", "POST", MCPPath, list, with(map[string]string{"Host": "evil.example:8321"}), false, 403, `Host "evil.example:8321" is not allowed`},
		{"unknown path", "GET", "/admin", "", nil, false, 404, "the MCP endpoint is /mcp"},
		// Accepted neighbours of the refused cases.
		{"loopback origin", "POST", MCPPath, list, with(map[string]string{"Origin": "http://localhost:6274"}), false, 200, `"tools"`},
		{"allowed origin", "POST", MCPPath, list, with(map[string]string{"Origin": "https://console.example.com"}), false, 200, `"tools"`},
		{"allowed host", "POST", MCPPath, list, with(map[string]string{"Host": "tools.example.com"}), false, 200, `"tools"`},
		{"good request", "POST", MCPPath, list, sess, false, 200, `"echo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tt.body)
			if tt.chunk {
				body = io.MultiReader(strings.NewReader(tt.body)) // hides the length
			}
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.hdr {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got := readBody(t, resp)
			if resp.StatusCode != tt.status || !strings.Contains(got, tt.want) {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, got, tt.status, tt.want)
			}
		})
	}
	// CORS: an allowed origin's preflight is answered, headers exposed.
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+MCPPath, nil)
	req.Header.Set("Origin", "https://console.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://console.example.com" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestHTTPStaticTokens: 401 + WWW-Authenticate without or with a wrong
// token, 400 for a malformed header, and tokens never reach logs or bodies.
func TestHTTPStaticTokens(t *testing.T) {
	const secret = "s3cret-token-value"
	_, srv, logs := start(t, HTTPOptions{Tokens: []string{"other-token", secret}})
	tests := []struct {
		name      string
		auth      string
		status    int
		challenge string // substring of WWW-Authenticate ("" = header must be absent)
	}{
		{"missing", "", 401, `Bearer realm="agent-tools", resource_metadata="http://`},
		{"wrong token", "Bearer " + secret + "x", 401, `error="invalid_token"`},
		{"prefix of token", "Bearer " + secret[:5], 401, `error="invalid_token"`},
		{"basic scheme", "Basic " + secret, 400, `error="invalid_request"`},
		{"no token", "Bearer", 400, `error="invalid_request"`},
		{"two tokens", "Bearer a b", 400, `error="invalid_request"`},
		{"not token68", "Bearer ab,c", 400, `error="invalid_request"`},
		{"padding inside", "Bearer ab=c", 400, `error="invalid_request"`},
		{"lower-case scheme", "bearer " + secret, 200, ""},
		{"right token", "Bearer " + secret, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.auth != "" {
				hdr["Authorization"] = tt.auth
			}
			resp := post(t, srv.URL, initBody, hdr)
			body := readBody(t, resp)
			ch := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != tt.status || (tt.challenge == "" && ch != "") || !strings.Contains(ch, tt.challenge) {
				t.Errorf("got %d %q %q, want %d %q", resp.StatusCode, ch, body, tt.status, tt.challenge)
			}
			if strings.Contains(body, secret[:8]) || strings.Contains(ch, secret[:8]) {
				t.Errorf("token echoed: %q %q", body, ch)
			}
		})
	}
	if l := logs.String(); strings.Contains(l, secret[:8]) || !strings.Contains(l, "reason=auth:invalid_token") || !strings.Contains(l, "user=token:") {
		t.Errorf("logs leak the token or lack the reason:\n%s", l)
	}
	// A named token's identity is its name: in the log, the session binding
	// and the rate limit; an unnamed one keeps its digest identity.
	_, named, nlogs := start(t, HTTPOptions{Tokens: []string{"other-token", secret}, TokenNames: []string{"", "ci"}})
	for _, tok := range []string{secret, "other-token"} {
		resp := post(t, named.URL, initBody, map[string]string{"Authorization": "Bearer " + tok})
		if readBody(t, resp); resp.StatusCode != 200 {
			t.Fatalf("named tokens: %d", resp.StatusCode)
		}
	}
	if l := nlogs.String(); strings.Contains(l, secret[:8]) || !strings.Contains(l, "user=token:ci") || !strings.Contains(l, "user="+config.TokenIdentity("other-token", "")) {
		t.Errorf("named token logs:\n%s", l)
	}
	// /metrics needs the token too; health does not.
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200} {
		resp, _ := http.Get(srv.URL + path)
		if resp.StatusCode != want {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
		resp.Body.Close()
	}
}

// TestHTTPClientWithAndWithoutAuth: the go-sdk client lists and calls tools.
func TestHTTPClientWithAndWithoutAuth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tokens []string
		client *http.Client
	}{
		{"no auth", nil, nil},
		{"bearer", []string{"tok-123"}, bearerClient("tok-123")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv, _ := start(t, HTTPOptions{Tokens: tc.tokens})
			cs := connect(t, srv.URL, tc.client, nil)
			ctx := context.Background()
			lt, err := cs.ListTools(ctx, nil)
			if err != nil || len(lt.Tools) != 2 {
				t.Fatalf("list: %v %+v", err, lt)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "hi" {
				t.Fatalf("call: %v %+v", err, res)
			}
			if cs.InitializeResult().ProtocolVersion >= PerRequestVersion {
				return // ping is gone from the per-request protocol
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	_, srv, _ := start(t, HTTPOptions{Tokens: []string{"tok-123"}})
	c := sdk.NewClient(&sdk.Implementation{Name: "x", Version: "1"}, nil)
	if _, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + MCPPath, MaxRetries: -1}, nil); err == nil {
		t.Error("connected without a token")
	}
}

// TestHTTPSessionLifecycle: DELETE ends a session (then 404), and a session
// cannot be used with another user's token.
func TestHTTPSessionLifecycle(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{Tokens: []string{"alice-token", "bob-token"}})
	alice := map[string]string{"Authorization": "Bearer alice-token"}
	sid := initSession(t, srv.URL, alice)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	hijack := post(t, srv.URL, list, map[string]string{"Authorization": "Bearer bob-token", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	if body := readBody(t, hijack); hijack.StatusCode != http.StatusForbidden {
		t.Errorf("other user's session: %d %s", hijack.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+MCPPath, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Authorization", "Bearer alice-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	after := post(t, srv.URL, list, map[string]string{"Authorization": "Bearer alice-token", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	if body := readBody(t, after); after.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: %d %s", after.StatusCode, body)
	}
}

// TestHTTPListChangedAndProgress: a connected client is told when tools
// change, and progress of a long call reaches it while the call runs (SSE).
func TestHTTPListChangedAndProgress(t *testing.T) {
	server := testMCPServer(nil)
	_, srv, _ := start(t, HTTPOptions{Server: server})
	changed := make(chan struct{}, 4)
	var progress atomic.Int32
	cs := connect(t, srv.URL, nil, &sdk.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	server.AddTool(&sdk.Tool{Name: "fresh", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 3 {
		t.Fatalf("after change: %v %d", err, len(lt.Tools))
	}
	p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 200}}
	p.SetProgressToken("p1")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	if progress.Load() < 3 {
		t.Errorf("progress notifications: %d", progress.Load())
	}
}

// TestHTTPStateless: no session id, GET/DELETE refused, calls work without
// a session.
func TestHTTPStateless(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{Stateless: true})
	resp := post(t, srv.URL, initBody, nil)
	body := readBody(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(body, "serverInfo") {
		t.Fatalf("initialize: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	call := post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"replica"}}}`, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if body := readBody(t, call); call.StatusCode != 200 || !strings.Contains(body, "replica") {
		t.Errorf("call: %d %s", call.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+MCPPath, nil)
	req.Header.Set("Accept", "text/event-stream")
	g, _ := http.DefaultClient.Do(req)
	g.Body.Close()
	if g.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", g.StatusCode)
	}
	cs := connect(t, srv.URL, nil, nil)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("go client, stateless: %v", err)
	}
}

// TestHTTPRateLimit: a flood from one token gets 429 + Retry-After while
// another token is still served.
func TestHTTPRateLimit(t *testing.T) {
	_, srv, logs := start(t, HTTPOptions{Tokens: []string{"flood", "calm"}, RatePerSecond: 1, RateBurst: 5})
	var limited *http.Response
	for i := 0; i < 20 && limited == nil; i++ {
		resp := post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer flood"})
		readBody(t, resp)
		if resp.StatusCode == http.StatusTooManyRequests {
			limited = resp
		} else if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	if limited == nil || limited.Header.Get("Retry-After") == "" {
		t.Fatalf("no 429 with Retry-After: %+v", limited)
	}
	ok := post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer calm"})
	if readBody(t, ok); ok.StatusCode != 200 {
		t.Errorf("other token: %d", ok.StatusCode)
	}
	if !strings.Contains(logs.String(), "reason=rate_limited") {
		t.Error("429 not logged with its reason")
	}
	// Anonymous clients of a public server (--insecure-no-auth) are limited
	// per address; those of a loopback-only server are not.
	_, srv2, _ := start(t, HTTPOptions{Addr: "0.0.0.0:8321", RatePerSecond: 1, RateBurst: 1})
	codes := []int{}
	for i := 0; i < 2; i++ {
		r := post(t, srv2.URL, initBody, nil)
		readBody(t, r)
		codes = append(codes, r.StatusCode)
	}
	if codes[0] != 200 || codes[1] != 429 {
		t.Errorf("per-address limit: %v", codes)
	}
	_, srv3, _ := start(t, HTTPOptions{RatePerSecond: 1, RateBurst: 1})
	for i := 0; i < 3; i++ {
		r := post(t, srv3.URL, initBody, nil)
		if readBody(t, r); r.StatusCode != 200 {
			t.Errorf("loopback anonymous request %d: %d", i, r.StatusCode)
		}
	}
}

// TestHTTPMetadata: RFC 9728 protected-resource metadata names the issuer.
func TestHTTPMetadata(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{Tokens: []string{"t"}, OIDC: OIDCOptions{Issuer: "https://id.example.com", Audience: "agent-tools"}})
	for _, p := range []string{MetadataPath, MetadataPath + MCPPath} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var md map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&md); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || md["resource"] != srv.URL+MCPPath || md["authorization_servers"].([]any)[0] != "https://id.example.com" {
			t.Errorf("%s: %d %v", p, resp.StatusCode, md)
		}
	}
	_, open, _ := start(t, HTTPOptions{})
	resp, _ := http.Get(open.URL + MetadataPath)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("metadata without auth: %d", resp.StatusCode)
	}
}

// TestHTTPGracefulShutdown: on cancel, a call in flight finishes within the
// grace period, new sessions are refused, and a call longer than the grace
// is cancelled.
func TestHTTPGracefulShutdown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		callMs int
		want   string
	}{
		{"finishes within grace", 300, "done"},
		{"cancelled after grace", 10000, "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drain := NewDrain()
			logs := &logBuffer{}
			h, err := NewHTTP(HTTPOptions{Server: testMCPServer(drain), Drain: drain, ShutdownGrace: time.Second, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			defer func() {
				if t.Failed() {
					t.Log(logs.String())
				}
			}()
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + ln.Addr().String()
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- h.Serve(ctx, ln) }()
			cs := connect(t, url, nil, nil)
			var wg sync.WaitGroup
			var text string
			var callErr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": tc.callMs}})
				callErr = err
				if err == nil {
					text = res.Content[0].(*sdk.TextContent).Text
				}
			}()
			for drain.InFlight() == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			began := time.Now()
			cancel()
			for !h.draining.Load() {
				time.Sleep(time.Millisecond)
			}
			if resp, err := http.Post(url+MCPPath, "application/json", strings.NewReader(initBody)); err == nil {
				if resp.StatusCode != http.StatusServiceUnavailable {
					t.Errorf("new session while draining: %d", resp.StatusCode)
				}
				resp.Body.Close()
			}
			wg.Wait()
			if callErr != nil || text != tc.want {
				t.Errorf("call: %v %q, want %q", callErr, text, tc.want)
			}
			select {
			case err := <-served:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return")
			}
			if took := time.Since(began); took > 4*time.Second {
				t.Errorf("shutdown took %s", took)
			}
		})
	}
}

func TestServeListenerError(t *testing.T) {
	h, _ := NewHTTP(HTTPOptions{Server: testMCPServer(nil)})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ln.Close()
	if err := h.Serve(context.Background(), ln); err == nil || errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve on a closed listener: %v", err)
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8321": true, "localhost:1": true, "[::1]:80": true, "127.1.2.3:5": true,
		"0.0.0.0:8321": false, ":8321": false, "[::]:1": false, "10.0.0.1:80": false, "example.com:80": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v", addr, got)
		}
	}
}

// TestHTTPJSONResponse: with JSONResponse, POSTs are answered with one JSON
// body, and a go-sdk client on a session still gets progress (on the GET
// stream); at 2026-07-28 there is no GET stream, so only the result.
func TestHTTPJSONResponse(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{JSONResponse: true})
	resp := post(t, srv.URL, initBody, nil)
	body := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.HasPrefix(body, "{") {
		t.Fatalf("initialize: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	for _, v := range []string{"2025-11-25", PerRequestVersion} {
		var progress atomic.Int32
		c := sdk.NewClient(&sdk.Implementation{Name: "go-client", Version: "1"}, &sdk.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { progress.Add(1) },
		})
		cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + MCPPath, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 200}}
		p.SetProgressToken("p1")
		res, err := cs.CallTool(context.Background(), p)
		if err != nil || res.Content[0].(*sdk.TextContent).Text != "done" {
			t.Fatalf("%s: %v %+v", v, err, res)
		}
		if progress.Load() == 0 && v < PerRequestVersion {
			t.Errorf("%s: no progress with JSON responses", v)
		}
		cs.Close()
	}
}

// Wrong tokens used to be checked forever at full speed: now an address
// that keeps failing is refused before its token is even looked at, and a
// good token from another address is unaffected.
func TestHTTPFailedAuthIsRateLimited(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, srv, logs := start(t, HTTPOptions{Tokens: []string{"right-token"}, RatePerSecond: -1, Now: clock})
	codes := map[int]int{}
	for range AuthFailureBurst + 5 {
		r := post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer wrong-token"})
		readBody(t, r)
		codes[r.StatusCode]++
	}
	if codes[http.StatusUnauthorized] != AuthFailureBurst || codes[http.StatusTooManyRequests] != 5 {
		t.Fatalf("status counts %v, want %d×401 then 429", codes, AuthFailureBurst)
	}
	// The right token from the same address waits too (the address is the key)...
	r := post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer right-token"})
	if readBody(t, r); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("blocked address: %d %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
	// ...until a failure's worth of time has passed.
	mu.Lock()
	now = now.Add(AuthFailureEvery)
	mu.Unlock()
	r = post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer right-token"})
	if readBody(t, r); r.StatusCode != 200 {
		t.Fatalf("after the wait: %d", r.StatusCode)
	}
	if !strings.Contains(logs.String(), "reason=auth:too_many_failures") {
		t.Error("the refusal is not logged with its reason")
	}
	// Missing credentials (a client's first, unauthenticated try) do not count.
	for range AuthFailureBurst + 2 {
		r := post(t, srv.URL, initBody, nil)
		if readBody(t, r); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("missing token: %d", r.StatusCode)
		}
	}
}

// Batches are answered per the negotiated protocol version: only
// 2025-03-26 has them, even when the client omits Mcp-Protocol-Version.
func TestHTTPBatchPerProtocolVersion(t *testing.T) {
	_, srv, _ := start(t, HTTPOptions{})
	batch := `[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`
	init := func(version string) string {
		body := strings.Replace(initBody, "2025-06-18", version, 1)
		resp := post(t, srv.URL, body, nil)
		readBody(t, resp)
		id := resp.Header.Get("Mcp-Session-Id")
		r := post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": version})
		readBody(t, r)
		return id
	}
	cases := []struct {
		version string
		header  bool
		ok      bool
	}{
		{"2025-06-18", false, false}, // the SDK alone accepted this one
		{"2025-06-18", true, false},
		{"2024-11-05", false, false},
		{"2025-03-26", false, true},
		{"2025-03-26", true, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s header=%v", c.version, c.header), func(t *testing.T) {
			hdr := map[string]string{"Mcp-Session-Id": init(c.version)}
			if c.header {
				hdr["Mcp-Protocol-Version"] = c.version
			}
			r := post(t, srv.URL, "\n "+batch, hdr)
			body := readBody(t, r)
			if c.ok {
				if r.StatusCode != 200 || !strings.Contains(body, `"id":3`) {
					t.Fatalf("batch refused under %s: %d %s", c.version, r.StatusCode, body)
				}
				return
			}
			if r.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, c.version) {
				t.Fatalf("batch under %s: %d %s", c.version, r.StatusCode, body)
			}
		})
	}
}
