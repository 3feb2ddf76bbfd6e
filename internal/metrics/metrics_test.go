package metrics

import (
	"context"
	"github.com/agent-tools/agent-tools/internal/policy"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestMiddleware(t *testing.T) {
	m := New()
	m.WatchSessions(func() int { return 3 })
	m.WatchProviders(func() []ProviderHealth {
		return []ProviderHealth{{ID: "local", Kind: "local", Up: true, Tools: 4}, {ID: "gh", Kind: "mcp", Up: false}}
	})
	resolved := catalog.Tool{Canonical: "gh_get_repo", Provider: "gh"}
	calls := []struct {
		req  pipeline.Request
		resp pipeline.Response
	}{
		{pipeline.Request{Resolved: resolved}, pipeline.Response{Result: &provider.Result{Text: "ok"}}},
		{pipeline.Request{Resolved: resolved}, pipeline.Response{Result: &provider.Result{IsError: true}}},
		{pipeline.Request{Resolved: resolved}, pipeline.Response{Err: toolerr.New(toolerr.ConfirmationRequired, "", "x"), Decision: "confirmation_required"}},
		{pipeline.Request{Tool: "made_up_name_from_the_client"}, pipeline.Response{Err: toolerr.New(toolerr.UnknownTool, "", "x")}},
		{pipeline.Request{Tool: "x"}, pipeline.Response{Err: toolerr.New(toolerr.RepeatedFailure, "", "x")}},
		{pipeline.Request{Tool: "x"}, pipeline.Response{Err: toolerr.New(toolerr.RepeatedFailure, "", "x"), Decision: "refused"}},
		// A forwarded resource read: counted by method, never by URI.
		{pipeline.Request{Via: "resources/read", Resolved: catalog.Tool{Canonical: "test://t/42", Provider: "up"}}, pipeline.Response{Result: &provider.Result{}}},
		{pipeline.Request{Resolved: resolved, Caller: policy.Caller{Profile: "ops"}}, pipeline.Response{Result: &provider.Result{Text: "ok"}}},
		// The result cache's answers: counted as hits and misses.
		{pipeline.Request{Resolved: resolved}, pipeline.Response{Result: &provider.Result{Text: "ok"}, Cache: "hit"}},
		{pipeline.Request{Resolved: resolved}, pipeline.Response{Result: &provider.Result{Text: "ok"}, Cache: "miss"}},
	}
	for _, c := range calls {
		resp := c.resp
		h := m.Middleware()(func(context.Context, *pipeline.Request) *pipeline.Response { return &resp })
		req := c.req
		if got := h(context.Background(), &req); got != &resp {
			t.Fatal("middleware changed the response")
		}
	}
	m.HTTPRequest("mcp", "POST", 200)
	m.HTTPRequest("mcp", "BREW", 405)
	m.AuthFailure("expired")
	m.RateLimited()
	out := scrape(t, m)
	for _, want := range []string{
		`agent_tools_tool_calls_total{outcome="ok",profile="default",provider="gh",tool="gh_get_repo"} 3`,
		`agent_tools_cache_lookups_total{provider="gh",result="hit"} 1`,
		`agent_tools_cache_lookups_total{provider="gh",result="miss"} 1`,
		`agent_tools_tool_calls_total{outcome="BACKEND_ERROR",profile="default",provider="gh",tool="gh_get_repo"} 1`,
		`agent_tools_tool_calls_total{outcome="CONFIRMATION_REQUIRED",profile="default",provider="gh",tool="gh_get_repo"} 1`,
		`agent_tools_tool_calls_total{outcome="UNKNOWN_TOOL",profile="default",provider="unknown",tool="unresolved"} 1`,
		`agent_tools_tool_calls_total{outcome="ok",profile="ops",provider="gh",tool="gh_get_repo"} 1`,
		`agent_tools_tool_calls_total{outcome="ok",profile="default",provider="up",tool="resources/read"} 1`,
		`agent_tools_confirmations_required_total{provider="gh"} 1`,
		`agent_tools_loop_guard_trips_total{action="escalated"} 1`,
		`agent_tools_loop_guard_trips_total{action="refused"} 1`,
		`agent_tools_tool_call_duration_seconds_count{provider="gh"} 6`,
		`agent_tools_sessions_active 3`,
		`agent_tools_provider_up{kind="local",provider="local"} 1`,
		`agent_tools_provider_up{kind="mcp",provider="gh"} 0`,
		`agent_tools_provider_tools{provider="local"} 4`,
		`agent_tools_http_requests_total{code="200",method="POST",route="mcp"} 1`,
		`agent_tools_http_requests_total{code="405",method="other",route="mcp"} 1`,
		`agent_tools_http_auth_failures_total{reason="expired"} 1`,
		`agent_tools_http_rate_limited_total 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(out, "made_up_name") {
		t.Error("a client-chosen name became a label value")
	}
}

func TestNoWatchers(t *testing.T) {
	out := scrape(t, New())
	if !strings.Contains(out, "agent_tools_sessions_active 0") || strings.Contains(out, "agent_tools_provider_up{") {
		t.Errorf("unexpected:\n%s", out)
	}
}
