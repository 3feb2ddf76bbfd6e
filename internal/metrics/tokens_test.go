package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/tokens"
)

// agent_tools_result_tokens observes each call's Response.ResultTokens by
// tool and provider, in the 10..100k buckets; the totals keep the same
// counts by tool and identity.
func TestResultTokensHistogram(t *testing.T) {
	tokens.Load()
	m := New()
	text := "The quick brown fox jumps over the lazy dog." // 10 tokens
	h := m.Middleware()(func(context.Context, *pipeline.Request) *pipeline.Response {
		return &pipeline.Response{Result: &provider.Result{Text: text}}
	})
	resolved := catalog.Tool{Canonical: "gh_get_repo", Provider: "gh"}
	for _, id := range []string{"alice", "alice", ""} {
		h(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: id}, Resolved: resolved})
	}
	out := scrape(t, m)
	for _, want := range []string{
		`agent_tools_result_tokens_bucket{provider="gh",tool="gh_get_repo",le="10"} 3`,
		`agent_tools_result_tokens_bucket{provider="gh",tool="gh_get_repo",le="100000"} 3`,
		`agent_tools_result_tokens_sum{provider="gh",tool="gh_get_repo"} 30`,
		`agent_tools_result_tokens_count{provider="gh",tool="gh_get_repo"} 3`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	tt := m.Tokens().Totals(time.Now())
	if len(tt.Tools) != 1 || tt.Tools[0] != (TokenRow{Name: "gh_get_repo", Calls: 3, Tokens: 30, WindowCalls: 3, WindowTokens: 30}) {
		t.Errorf("tools: %+v", tt.Tools)
	}
	if len(tt.Identities) != 2 || tt.Identities[0].Name != "alice" || tt.Identities[0].Tokens != 20 || tt.Identities[1].Name != NoIdentity || tt.Identities[1].Tokens != 10 {
		t.Errorf("identities: %+v", tt.Identities)
	}
	if ResultTokenBuckets[0] != 10 || ResultTokenBuckets[len(ResultTokenBuckets)-1] != 100000 {
		t.Errorf("buckets %v", ResultTokenBuckets)
	}
}

// The window holds the last span; the totals since start keep everything.
// Identities past MaxTokenIdentities are totalled as one.
func TestTokensWindow(t *testing.T) {
	tk := NewTokens(15 * time.Minute)
	t0 := time.Date(2026, 12, 1, 10, 0, 30, 0, time.UTC)
	tk.Add(t0, "a", "x", 100)
	tk.Add(t0.Add(10*time.Minute), "a", "x", 5)
	tk.Add(t0.Add(10*time.Minute), "b", "y", 50)
	got := tk.Totals(t0.Add(20 * time.Minute))
	if got.Tools[0] != (TokenRow{Name: "a", Calls: 2, Tokens: 105, WindowCalls: 1, WindowTokens: 5}) || got.Tools[1] != (TokenRow{Name: "b", Calls: 1, Tokens: 50, WindowCalls: 1, WindowTokens: 50}) {
		t.Errorf("tools: %+v", got.Tools)
	}
	got = tk.Totals(t0.Add(40 * time.Minute))
	if got.Tools[0].WindowCalls != 0 || got.Tools[0].Tokens != 105 {
		t.Errorf("after the window: %+v", got.Tools)
	}
	for i := range MaxTokenIdentities + 5 {
		tk.Add(t0, "a", strings.Repeat("i", i+1), 1)
	}
	if ids := tk.Totals(t0).Identities; len(ids) != MaxTokenIdentities+1 || !hasRow(ids, OtherIdentity) {
		t.Errorf("%d identities kept", len(ids))
	}
}

func hasRow(rows []TokenRow, name string) bool {
	for _, r := range rows {
		if r.Name == name {
			return true
		}
	}
	return false
}
