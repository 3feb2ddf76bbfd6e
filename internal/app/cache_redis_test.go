package app

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
)

// TestResultCacheAcrossReplicas: with server.redis a result kept on one
// replica answers the same caller on another; another identity runs the
// tool; and a cached value written into Redis without the cluster key (a
// forged answer, as redis-cli would write it) is never served: the call
// runs instead.
func TestResultCacheAcrossReplicas(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	srv := redistest.Start(t)
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\naudit: {path: \"off\"}\nserver:\n  redis: {url: \"" + srv.URL + "\"}\n" +
		"providers:\n  - id: sh\n    kind: cli\n    allow: [date]\n    tools:\n      - {name: now, description: The time in nanoseconds., argv: [date, \"+%s%N\"], readonly: true}\n" +
		"cache:\n  - {tools: [\"sh_*\"], ttl: 5m}\n"
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
	call := func(a *App, identity string) (string, string) {
		t.Helper()
		r := a.Call(ctx, &pipeline.Request{Caller: policy.Caller{Identity: identity}, Tool: "sh_now", Args: []byte(`{}`)})
		if r.Failed() {
			t.Fatalf("call: %v", r.Err)
		}
		return strings.TrimSpace(r.Result.Text), r.Cache
	}
	first, _ := call(r1, "token:alice")
	if again, how := call(r2, "token:alice"); again != first || how != "hit" {
		t.Fatalf("r2 answered %q (%s), want r1's kept %q (hit)", again, how, first)
	}
	if other, how := call(r2, "token:bob"); other == first || how == "hit" {
		t.Fatalf("bob got alice's result %q (%s)", other, how)
	}

	// Forge every cached value: the same value without its seal, with
	// another answer in it.
	opt, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	forged := 0
	for _, k := range keys {
		v, err := rc.Get(ctx, k).Result()
		if err != nil || !strings.Contains(v, first) {
			continue
		}
		raw := v
		if i := strings.Index(v, "."); strings.HasPrefix(v, "ats1.") && i >= 0 {
			if j := strings.Index(v[i+1:], "."); j >= 0 {
				raw = v[i+1+j+1:]
			}
		}
		if err := rc.Set(ctx, k, strings.ReplaceAll(raw, first, "FORGED"), 0).Err(); err != nil {
			t.Fatal(err)
		}
		forged++
	}
	if forged == 0 {
		t.Fatalf("no cached value in Redis holds %q (keys %v)", first, keys)
	}
	// The first call after the forgery runs the tool (and keeps its own,
	// sealed result, which the other replica then serves).
	got, how := call(r1, "token:alice")
	if strings.Contains(got, "FORGED") || how == "hit" || got == first {
		t.Fatalf("a forged cache entry was served: %q (%s)", got, how)
	}
	if again, how := call(r2, "token:alice"); again != got || how != "hit" {
		t.Fatalf("r2 after the forgery: %q (%s), want r1's new %q (hit)", again, how, got)
	}
}
