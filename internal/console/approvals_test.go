package console_test

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// connect opens an MCP client session on the fixture's /mcp; the client
// cannot elicit. onList counts tools/list_changed notifications.
func (f *fixture) connect(ctx context.Context, onList chan<- struct{}) *sdk.ClientSession {
	f.t.Helper()
	opts := &sdk.ClientOptions{}
	if onList != nil {
		opts.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case onList <- struct{}{}:
			default:
			}
		}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "approvals-test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp"}, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cs.Close() })
	return cs
}

// A mutating call from a client that cannot elicit waits for the console
// under confirm: human: approve runs it, deny and timeout are DENIED.
func TestApprovalsWhileAClientWaits(t *testing.T) {
	tests := []struct {
		name    string
		answer  *bool // nil: let it time out
		timeout time.Duration
		wantErr bool
		wiped   int32
	}{
		{"approve", ptr(true), time.Minute, false, 1},
		{"deny", ptr(false), time.Minute, true, 0},
		{"timeout", nil, 0, true, 0}, // policy.approvalTimeout below
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			appr := &console.Approvals{Timeout: tc.timeout}
			pol := "policy: {confirm: human}\n"
			if tc.timeout == 0 {
				pol = "policy: {confirm: human, approvalTimeout: 50ms}\n"
			}
			f := newFixtureWith(t, pol, appr)
			cookie, csrf := f.login()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs := f.connect(ctx, nil)
			type result struct {
				res *sdk.CallToolResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: f.canonical("wipe"), Arguments: map[string]any{}})
				done <- result{res, err}
			}()
			if tc.answer != nil {
				var pending []console.Approval
				testutil.WaitFor(t, "the pending approval", 10*time.Second, func() bool {
					var out struct{ Approvals []console.Approval }
					res := f.do("GET", "/ui/api/approvals", "", "Cookie", cookie)
					_ = json.NewDecoder(res.Body).Decode(&out)
					pending = out.Approvals
					return len(pending) == 1
				})
				if p := pending[0]; p.Tool != f.canonical("wipe") || p.Provider != "demo" || p.Client != "approvals-test" || p.Identity == "" { // no Session at 2026-07-28 (the client's default): no session exists
					t.Fatalf("pending: %+v", p)
				}
				if res := f.do("POST", "/ui/api/approvals/"+pending[0].ID, `{"approve":true}`, "Cookie", cookie); res.StatusCode != http.StatusForbidden {
					t.Fatalf("an answer without the CSRF token: %d", res.StatusCode)
				}
				body, _ := json.Marshal(map[string]bool{"approve": *tc.answer})
				if res := f.do("POST", "/ui/api/approvals/"+pending[0].ID, string(body), "Cookie", cookie, console.CSRFHeader, csrf); res.StatusCode != http.StatusOK {
					t.Fatalf("answer: %d", res.StatusCode)
				}
				if res := f.do("POST", "/ui/api/approvals/"+pending[0].ID, string(body), "Cookie", cookie, console.CSRFHeader, csrf); res.StatusCode != http.StatusNotFound {
					t.Fatalf("a second answer: %d", res.StatusCode)
				}
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			text := r.res.Content[0].(*sdk.TextContent).Text
			if r.res.IsError != tc.wantErr || (tc.wantErr && !strings.Contains(text, "DENIED")) {
				t.Fatalf("result isError %v: %s", r.res.IsError, text)
			}
			if n := f.demo.wiped.Load(); n != tc.wiped {
				t.Fatalf("wipe ran %d times, want %d", n, tc.wiped)
			}
		})
	}
}

// Without confirm: human the queue stays out of the way: agent mode still
// asks the agent for confirm: true.
func TestApprovalsOnlyUnderHumanConfirm(t *testing.T) {
	appr := &console.Approvals{}
	f := newFixtureWith(t, "", appr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.connect(ctx, nil).CallTool(ctx, &sdk.CallToolParams{Name: f.canonical("wipe"), Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "CONFIRMATION_REQUIRED") {
		t.Fatalf("agent mode: %s", text)
	}
	if l, err := appr.List(ctx); err != nil || len(l) != 0 || f.demo.wiped.Load() != 0 {
		t.Fatal("agent mode used the console queue")
	}
}

// Toggling a provider in the console tells connected MCP clients.
func TestToggleNotifiesMCPClients(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	changed := make(chan struct{}, 1)
	cs := f.connect(ctx, changed)
	if res := f.do("PUT", "/ui/api/providers/demo", `{"enabled":false}`, "Cookie", cookie, console.CSRFHeader, csrf); res.StatusCode != http.StatusOK {
		t.Fatalf("toggle: %d", res.StatusCode)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after the toggle")
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == f.canonical("greet") {
			t.Fatal("the client still lists greet")
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A waiting client gets progress notifications; "always allow" is
// remembered in the decision store, so the next call of the tool runs
// without waiting. Malformed answers are refused.
func TestApproveAlways(t *testing.T) {
	f := newFixtureWith(t, "policy: {confirm: human}\n", &console.Approvals{Timeout: time.Minute})
	cookie, csrf := f.login()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	progress := make(chan string, 8)
	c := sdk.NewClient(&sdk.Implementation{Name: "approvals-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			select {
			case progress <- r.Params.Message:
			default:
			}
		},
	})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() string {
		p := &sdk.CallToolParams{Name: f.canonical("wipe"), Arguments: map[string]any{}}
		p.SetProgressToken("approval")
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			return err.Error()
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	done := make(chan string, 1)
	go func() { done <- call() }()
	// The waiting client is told why (a signal: no polling needed here).
	select {
	case msg := <-progress:
		if !strings.Contains(msg, "waiting for a person to approve "+f.canonical("wipe")) {
			t.Fatalf("progress: %q", msg)
		}
	case <-ctx.Done():
		t.Fatal("no progress notification while the call waits")
	}
	var id string
	testutil.WaitFor(t, "the pending approval", 10*time.Second, func() bool {
		var out struct{ Approvals []console.Approval }
		_ = json.NewDecoder(f.do("GET", "/ui/api/approvals", "", "Cookie", cookie).Body).Decode(&out)
		if len(out.Approvals) == 1 {
			id = out.Approvals[0].ID
		}
		return id != ""
	})
	for _, bad := range []string{`{"approve":false,"remember":"always"}`, `{"approve":true,"remember":"forever"}`, `{}`} {
		if res := f.do("POST", "/ui/api/approvals/"+id, bad, "Cookie", cookie, console.CSRFHeader, csrf); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, res.StatusCode)
		}
	}
	if res := f.do("POST", "/ui/api/approvals/"+id, `{"approve":true,"remember":"always"}`, "Cookie", cookie, console.CSRFHeader, csrf); res.StatusCode != http.StatusOK {
		t.Fatalf("always: %d", res.StatusCode)
	}
	if got := <-done; got != "wiped" {
		t.Fatalf("first call: %q", got)
	}
	if got := call(); got != "wiped" || f.demo.wiped.Load() != 2 {
		t.Fatalf("second call: %q (ran %d times): the decision was not remembered", got, f.demo.wiped.Load())
	}
}
