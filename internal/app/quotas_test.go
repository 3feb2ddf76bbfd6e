package app

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// TestQuotasAcrossReplicas: two replicas (apps over one redis-server) with
// the same quotas: calls on r1 use up the caller's burst and r2 refuses
// the next one RATE_LIMITED, with retry_after_ms; another identity is
// unaffected on either.
func TestQuotasAcrossReplicas(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	srv := redistest.Start(t)
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\naudit: {path: \"off\"}\nserver:\n  redis: {url: \"" + srv.URL + "\"}\n" +
		"providers:\n  - id: sh\n    kind: cli\n    allow: [echo]\n    tools:\n      - {name: hi, description: Say hi., argv: [echo, hi], readonly: true}\n" +
		"quotas:\n  - {identities: [\"token:intern\"], tools: [\"sh_*\"], rate: 2/hour, burst: 2}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	replica := func(id string) *App {
		a, err := New(ctx, Options{ProjectDir: dir, AuditDefault: io.Discard, Env: func(k string) (string, bool) {
			switch k {
			case "AGENT_TOOLS_CLUSTER_KEY":
				return "app-test-cluster-key-0123456789abcdef", true
			case "AGENT_TOOLS_REPLICA_ID":
				return id, true
			}
			return "", false
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	r1, r2 := replica("r1"), replica("r2")
	call := func(a *App, identity string) *pipeline.Response {
		return a.Call(ctx, &pipeline.Request{Caller: policy.Caller{Identity: identity}, Tool: "sh_hi", Args: []byte(`{}`)})
	}
	for i := range 2 {
		if r := call(r1, "token:intern"); r.Failed() {
			t.Fatalf("r1 call %d: %v", i+1, r.Err)
		}
	}
	r := call(r2, "token:intern")
	if r.Err == nil || r.Err.Code != toolerr.RateLimited || r.Err.Details["limit"] != "rate" {
		t.Fatalf("r2 after r1 used the burst: %+v", r)
	}
	if ms, _ := r.Err.Details["retry_after_ms"].(int64); ms <= 0 {
		t.Fatalf("retry_after_ms %v", r.Err.Details["retry_after_ms"])
	}
	if r := call(r1, "token:intern"); r.Err == nil || r.Err.Code != toolerr.RateLimited {
		t.Fatalf("r1 too: %+v", r)
	}
	for _, a := range []*App{r1, r2} {
		if r := call(a, "token:ci"); r.Failed() {
			t.Fatalf("another identity: %v", r.Err)
		}
	}
}
