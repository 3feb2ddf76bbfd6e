package quota

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// replica is one process: its own registry, Redis connection pool, local
// counts and pipeline, sharing only the Redis server.
func replica(t *testing.T, url string, quotas []config.Quota) pipeline.Handler {
	t.Helper()
	fake := providertest.New(catalog.ProviderInfo{ID: "gh"}, providertest.Tool("issues", "Issues", "", true))
	fake.Func = func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: strings.Repeat(" the", 11)}, nil // 11 o200k_base tokens
	}
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	r, err := state.NewRedis(url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	l := New(Options{Quotas: quotas, Redis: r.Client(), Prefix: r.Prefix()})
	return pipeline.New(pipeline.Options{Catalog: reg, Quota: l.Stage()})
}

func callAs(run pipeline.Handler, identity string) *pipeline.Response {
	return run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: identity}, Tool: "gh_issues", Args: json.RawMessage(`{}`)})
}

// TestTwoReplicasShareQuotas: against a real redis-server, calls on
// replica A use up the rate and the token window, and replica B refuses.
func TestTwoReplicasShareQuotas(t *testing.T) {
	srv := redistest.Start(t)
	rate := []config.Quota{{Identities: []string{"token:*"}, Tools: []string{"gh_*"}, Rate: per(10, time.Hour), Burst: 3}}
	a, b := replica(t, srv.URL, rate), replica(t, srv.URL, rate)
	for i := range 3 {
		if r := callAs(a, "token:intern"); r.Failed() {
			t.Fatalf("A call %d: %v", i+1, r.Err)
		}
	}
	r := callAs(b, "token:intern")
	if r.Err == nil || r.Err.Code != toolerr.RateLimited || r.Quota == nil || r.Quota.Limit != "rate" {
		t.Fatalf("B after A used the burst: %+v", r)
	}
	if ms, _ := r.Err.Details["retry_after_ms"].(int64); ms < 300_000 || ms > 360_000 { // 10/hour: one every 6 minutes
		t.Fatalf("retry_after_ms %v", r.Err.Details["retry_after_ms"])
	}
	if r := callAs(b, "token:ci"); r.Failed() {
		t.Fatalf("another identity on B: %v", r.Err)
	}

	tokens := []config.Quota{{Tokens: per(20, 24*time.Hour)}}
	a, b = replica(t, srv.URL, tokens), replica(t, srv.URL, tokens)
	for i := range 2 { // 11 tokens each: 22 ≥ 20
		if r := callAs(a, "token:x"); r.Failed() {
			t.Fatalf("A call %d: %v", i+1, r.Err)
		}
	}
	r = callAs(b, "token:x")
	if r.Err == nil || r.Err.Code != toolerr.QuotaExceeded || r.Quota.EstTokensUsed != 22 {
		t.Fatalf("B after A used the window: %+v %+v", r.Err, r.Quota)
	}
}

// TestRedisDownFallsBackLocal: with Redis gone a replica counts on its
// own and never fails a call for it.
func TestRedisDownFallsBackLocal(t *testing.T) {
	srv := redistest.Start(t)
	a := replica(t, srv.URL, []config.Quota{{Rate: per(2, time.Hour)}})
	srv.Stop()
	for i := range 2 {
		if r := callAs(a, "token:x"); r.Failed() {
			t.Fatalf("call %d without Redis: %v", i+1, r.Err)
		}
	}
	if r := callAs(a, "token:x"); r.Err == nil || r.Err.Code != toolerr.RateLimited {
		t.Fatalf("the local bucket: %+v", r)
	}
}
