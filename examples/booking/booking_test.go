package main

import (
	"bytes"
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	agenttools "github.com/agent-tools/agent-tools"
)

var today = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

func newServer(t *testing.T, o Options) (*Server, *httptest.Server) {
	t.Helper()
	o.Now = func() time.Time { return today }
	s, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

// rest calls an endpoint and returns the status and the decoded body.
func rest(t *testing.T, ts *httptest.Server, method, path, body, token string) (int, any) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, path, b)
	}
	return resp.StatusCode, v
}

type mcpClient struct {
	t       *testing.T
	cs      *sdk.ClientSession
	changed chan struct{}
}

func connect(t *testing.T, ts *httptest.Server, token string) *mcpClient {
	t.Helper()
	c := &mcpClient{t: t, changed: make(chan struct{}, 8)}
	var hc *http.Client
	if token != "" {
		hc = &http.Client{Transport: bearer{token}}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "booking-test"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { c.changed <- struct{}{} },
	}).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c.cs = cs
	return c
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a flat tool and returns its JSON result decoded.
func (c *mcpClient) call(name string, args map[string]any) any {
	c.t.Helper()
	res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError {
		c.t.Fatalf("%s: %s", name, text)
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		c.t.Fatalf("%s: not JSON: %s", name, text)
	}
	return v
}

func (c *mcpClient) tools() string {
	c.t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	var n []string
	for _, tl := range res.Tools {
		n = append(n, tl.Name)
	}
	return strings.Join(n, " ")
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

// REST and MCP call the same service functions and answer the same JSON.
func TestRESTAndMCPAgree(t *testing.T) {
	_, ts := newServer(t, Options{})
	c := connect(t, ts, "")
	for _, name := range []string{"booking_check_availability", "booking_create", "booking_cancel", "booking_list_agenda", "clients_list"} {
		if !strings.Contains(" "+c.tools()+" ", " "+name+" ") {
			t.Fatalf("flat tools/list lacks %s: %s", name, c.tools())
		}
	}

	status, slots := rest(t, ts, "GET", "/api/v1/booking/slots", "", "")
	if status != 200 || !strings.Contains(js(slots), `"date":"2026-03-02"`) || !strings.Contains(js(slots), `"time":"09:00"`) {
		t.Fatalf("GET slots with no query: %d %s", status, js(slots))
	}
	if got := c.call("booking_check_availability", map[string]any{}); js(got) != js(slots) {
		t.Fatalf("availability differs:\nREST %s\nMCP  %s", js(slots), js(got))
	}

	status, viaREST := rest(t, ts, "POST", "/api/v1/booking/bookings", `{"client_id":"c1","time":"09:00"}`, "")
	if status != 201 {
		t.Fatalf("POST bookings: %d %s", status, js(viaREST))
	}
	viaMCP := c.call("booking_create", map[string]any{"client_id": "c2", "time": "10:00", "agent_tools_confirm": true})
	if js(viaMCP) != `{"cancelled":false,"client_id":"c2","date":"2026-03-02","id":"b2","time":"10:00"}` {
		t.Fatalf("booking_create: %s", js(viaMCP))
	}
	_, agenda := rest(t, ts, "GET", "/api/v1/booking/agenda", "", "")
	if got := c.call("booking_list_agenda", map[string]any{}); js(got) != js(agenda) || !strings.Contains(js(agenda), `"b2"`) {
		t.Fatalf("agenda differs:\nREST %s\nMCP  %s", js(agenda), js(got))
	}
	status, cancelled := rest(t, ts, "PATCH", "/api/v1/booking/bookings/b1/cancel", "", "")
	if status != 200 || !strings.Contains(js(cancelled), `"cancelled":true`) {
		t.Fatalf("PATCH cancel: %d %s", status, js(cancelled))
	}
	if got := c.call("booking_cancel", map[string]any{"id": "b2", "agent_tools_confirm": true}); !strings.Contains(js(got), `"cancelled":true`) {
		t.Fatalf("booking_cancel: %s", js(got))
	}
	// The same failure both ways: the slot is free again, b1 is already cancelled.
	status, _ = rest(t, ts, "PATCH", "/api/v1/booking/bookings/b1/cancel", "", "")
	res, _ := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "booking_cancel", Arguments: map[string]any{"id": "b1", "agent_tools_confirm": true}})
	if text := res.Content[0].(*sdk.TextContent).Text; status != 409 || !res.IsError || !strings.Contains(text, "already cancelled") || !strings.Contains(text, "BACKEND_ERROR") {
		t.Fatalf("double cancel: REST %d, MCP %s", status, text)
	}
	_, clients := rest(t, ts, "GET", "/api/v1/clients", "", "")
	if got := c.call("clients_list", map[string]any{}); js(got) != js(clients) {
		t.Fatalf("clients differ")
	}
}

func TestBadRequests(t *testing.T) {
	_, ts := newServer(t, Options{})
	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/api/v1/booking/slots?date=tomorrow", "", 400},
		{"POST", "/api/v1/booking/bookings", `{"client_id":"c1","time":"08:00"}`, 400},
		{"POST", "/api/v1/booking/bookings", `{"client_id":"nobody","time":"09:00"}`, 404},
		{"POST", "/api/v1/booking/bookings", `{"client_id":"c1","time":"09:00","extra":1}`, 400},
		{"POST", "/api/v1/booking/bookings", `not json`, 400},
		{"PATCH", "/api/v1/booking/bookings/b99/cancel", "", 404},
		{"PUT", "/api/v1/control/plugins/nope", `{"enabled":false}`, 404},
		{"PUT", "/api/v1/control/plugins/booking", `{}`, 400},
		{"PUT", "/api/v1/control/plugins/booking", `{"enabled":"no"}`, 400},
	} {
		if status, body := rest(t, ts, tc.method, tc.path, tc.body, ""); status != tc.status {
			t.Errorf("%s %s %s: %d %s, want %d", tc.method, tc.path, tc.body, status, js(body), tc.status)
		}
	}
}

// Toggling a plugin in the control endpoint changes tools/list at once,
// notifies the connected client, and guards the plugin's REST endpoints.
func TestTogglePluginLive(t *testing.T) {
	_, ts := newServer(t, Options{})
	c := connect(t, ts, "")
	if !strings.Contains(c.tools(), "clients_list") {
		t.Fatal("clients_list missing at start")
	}
	for _, on := range []bool{false, true} {
		status, body := rest(t, ts, "PUT", "/api/v1/control/plugins/clients", js(map[string]bool{"enabled": on}), "")
		if status != 200 {
			t.Fatalf("toggle: %d %s", status, js(body))
		}
		select {
		case <-c.changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/tools/list_changed")
		}
		if got := c.tools(); strings.Contains(got, "clients_list") != on || !strings.Contains(got, "booking_create") {
			t.Fatalf("enabled=%v: tools/list = %s", on, got)
		}
		wantREST := 503
		if on {
			wantREST = 200
		}
		if status, _ := rest(t, ts, "GET", "/api/v1/clients", "", ""); status != wantREST {
			t.Fatalf("enabled=%v: GET clients = %d", on, status)
		}
	}
}

// The panel agent's in-process path works with no HTTP server at all.
func TestInProcessWithoutHTTP(t *testing.T) {
	s, err := NewServer(Options{Now: func() time.Time { return today }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess := s.Runtime().NewSession(agenttools.SessionOptions{Client: "panel-agent", User: "ada",
		Confirm: func(context.Context, string) (agenttools.Approval, error) { return agenttools.ApprovedOnce, nil }})
	defer sess.Close()
	res, err := sess.Call(context.Background(), "booking_create", map[string]any{"client_id": "c1", "time": "11:00"})
	if err != nil || !strings.Contains(res.Text, `"time":"11:00"`) {
		t.Fatalf("in-process create: %v %v", res, err)
	}
	res, err = sess.Call(context.Background(), "booking_check_availability", nil)
	if err != nil || strings.Contains(res.Text, "11:00") {
		t.Fatalf("the booked slot must be gone: %v %v", res, err)
	}
}

func TestOneAuthForRESTAndMCP(t *testing.T) {
	_, ts := newServer(t, Options{Token: "s3cret"})
	for _, path := range []string{"/api/v1/booking/slots", "/mcp"} {
		req, _ := http.NewRequest("POST", ts.URL+path, bytes.NewReader([]byte(`{}`)))
		if path != "/mcp" {
			req.Method = "GET"
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s without a token: %d", path, resp.StatusCode)
		}
	}
	if status, _ := rest(t, ts, "GET", "/api/v1/booking/slots", "", "wrong"); status != 401 {
		t.Errorf("wrong token: %d", status)
	}
	if status, _ := rest(t, ts, "GET", "/api/v1/booking/slots", "", "s3cret"); status != 200 {
		t.Errorf("right token: %d", status)
	}
	c := connect(t, ts, "s3cret")
	if !strings.Contains(c.tools(), "booking_create") {
		t.Fatal("MCP with the token")
	}
}

func TestRunRefusesPublicAddrWithoutAuth(t *testing.T) {
	t.Setenv("BOOKING_TOKEN", "")
	t.Setenv("BOOKING_OIDC_ISSUER", "")
	err := run(context.Background(), []string{"--addr", "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "BOOKING_TOKEN") {
		t.Fatalf("run = %v", err)
	}
}

// TestServesOnlyItsTools: run from the repository root (as `go run
// ./examples/booking` is), /mcp lists exactly the tools docs/embedding.md names, not the
// checkout's own .agents/tools scripts.
func TestServesOnlyItsTools(t *testing.T) {
	t.Chdir("../..")
	if _, err := os.Stat(".agents/tools"); err != nil {
		t.Skip("no .agents/tools in the repository root to leak: ", err)
	}
	_, ts := newServer(t, Options{})
	got := connect(t, ts, "").tools()
	const want = "booking_check_availability booking_create booking_cancel booking_list_agenda clients_list clients_create"
	if !sameWords(got, want) {
		t.Errorf("/mcp lists %q, want docs/embedding.md's %q", got, want)
	}
}

func sameWords(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
