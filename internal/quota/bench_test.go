package quota

import (
	"context"
	"path"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// BenchmarkStageNotReached is the stage alone around a handler that
// answers at once: a quota that matches, with every limit set, none
// reached (the cost the stage adds to every call; BenchmarkTeamControls
// in internal/pipeline measures it in the whole pipeline).
func BenchmarkStageNotReached(b *testing.B) {
	q := config.Quota{Identities: []string{"token:*"}, Tools: []string{"svc_*"},
		Rate: config.PerPeriod{N: 1_000_000_000, Period: time.Second}, Burst: 100, Concurrent: 64,
		Tokens: config.PerPeriod{N: 1 << 60, Period: 24 * time.Hour}}
	res := &pipeline.Response{Result: &provider.Result{Text: `{"n":1,"token":"abc"}`}}
	h := New(Options{Quotas: []config.Quota{q}}).Stage()(func(context.Context, *pipeline.Request) *pipeline.Response { return res })
	req := &pipeline.Request{Caller: policy.Caller{Identity: "token:alice"}, Tool: "svc_read"}
	req.Resolved = catalog.Tool{Canonical: "svc_read"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if resp := h(ctx, req); resp != res {
			b.Fatal(resp.Err)
		}
	}
}

func TestMatchGlobIsPathMatch(t *testing.T) {
	globs := []string{"*", "svc_*", "token:*", "gh_*", "a*b*", "x?*", "[ab]*", `a\*`, "svc_read", "", "a/*", "*/x", "[*"}
	names := []string{"", "svc_read", "svc_", "svc", "token:alice", "token:a/b", "gh_x/y", "ab", "a*", "a/b", "xy", "svc_read/x", "[", "a\\*"}
	for _, g := range globs {
		for _, n := range names {
			want, _ := path.Match(g, n)
			if got := matchGlob(g, n); got != want {
				t.Errorf("matchGlob(%q, %q) = %v, path.Match says %v", g, n, got, want)
			}
		}
	}
}
