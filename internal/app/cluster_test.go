package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// Two replicas (apps over one Redis): a toggle and a restart made on one
// are applied by the other, which tells its own sessions; a replica that
// starts later serves the cluster's choice from the start.
func TestClusterChangesReachEveryReplica(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	srv := redistest.Start(t)
	var gen atomic.Int32 // the tool a new upstream session offers
	gen.Store(1)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server {
		up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
		sdk.AddTool(up, &sdk.Tool{Name: fmt.Sprintf("gen%d", gen.Load()), Description: "Which session."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
			})
		return up
	}, nil))
	t.Cleanup(ts.Close) // after the replicas (cleanups run last first): they hold sessions on it
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\naudit: {path: \"off\"}\nserver:\n  redis: {url: \"" + srv.URL + "\"}\nproviders:\n" +
		"  - {id: up, kind: mcp, url: " + ts.URL + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	replica := func(id string) (*App, chan struct{}) {
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
		changed := make(chan struct{}, 16)
		a.OnChange(func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		})
		return a, changed
	}
	r1, _ := replica("r1")
	r2, changed2 := replica("r2")
	has := func(a *App, name string) bool { _, ok := a.Registry().Lookup(name); return ok }
	if !has(r1, "up_gen1") || !has(r2, "up_gen1") {
		t.Fatalf("before: %v / %v", r1.Registry().Names(), r2.Registry().Names())
	}
	// told waits for r2's sessions to be told of a change made on r1 since
	// start for which cond holds (the first notices may be earlier ones).
	told := func(what string, start time.Time, cond func() bool) time.Duration {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case <-changed2:
				if cond() {
					took := time.Since(start)
					t.Logf("%s on r1 reached r2's sessions after %v", what, took)
					return took
				}
			case <-deadline:
				t.Fatalf("%s on r1: r2 was not told (tools %v)", what, r2.Registry().Names())
			}
		}
	}

	start := time.Now()
	if err := r1.SetEnabled(ctx, "up", false); err != nil {
		t.Fatal(err)
	}
	told("switching up off", start, func() bool { return stateOf(t, r2, "up").State == status.StateDisabled })
	start = time.Now()
	if err := r1.SetEnabled(ctx, "up", true); err != nil {
		t.Fatal(err)
	}
	told("switching up on", start, func() bool { return has(r2, "up_gen1") })

	// A restart on r1 restarts r2's own upstream session too.
	gen.Store(2)
	start = time.Now()
	if err := r1.Restart(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	if !has(r1, "up_gen2") {
		t.Fatalf("r1 after its restart: %v", r1.Registry().Names())
	}
	told("restarting up", start, func() bool { return has(r2, "up_gen2") })
	testutil.WaitFor(t, "r2's restart count", 10*time.Second, func() bool { return stateOf(t, r2, "up").Restarts == 1 })
	if n := stateOf(t, r1, "up").Restarts; n != 1 {
		t.Errorf("r1 restarted %d times, want once (not again for its own change)", n)
	}

	// Off again; a replica that starts now serves the cluster's choice.
	if err := r2.SetEnabled(ctx, "up", false); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "r1 to switch up off", 10*time.Second, func() bool { return stateOf(t, r1, "up").State == status.StateDisabled })
	r3, _ := replica("r3")
	if st := stateOf(t, r3, "up"); st.State != status.StateDisabled || st.Restarts != 0 {
		t.Fatalf("a replica started later: %+v", st)
	}
}
