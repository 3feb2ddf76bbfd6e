package openapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/app"
)

// BenchmarkCallOverhead measures one REST call through the whole runtime
// (MCP client → facade → pipeline: validation, policy, audit → provider →
// HTTP) against the same HTTP request made directly, side by side in one
// run, and reports both and their ratio.
func BenchmarkCallOverhead(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"7","name":"Rex","tag":"dog"}`)
	}))
	defer srv.Close()
	dir := b.TempDir()
	spec, _ := filepath.Abs("testdata/pets.yaml")
	cfg := fmt.Sprintf("audit: { path: off }\nproviders:\n  - id: pets\n    kind: openapi\n    spec: %s\n    baseURL: %s/v1\n", spec, srv.URL)
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: dir, Mode: "progressive", AuditDefault: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := a.Facade.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "agent_tools_pets_call", Arguments: map[string]any{"toolName": "pets/get", "arguments": map[string]any{"petId": "7"}}}
	client := &http.Client{}
	direct := func() {
		resp, err := client.Get(srv.URL + "/v1/pets/7")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	viaRuntime := func() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	direct()
	viaRuntime()
	var tDirect, tRuntime time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		viaRuntime()
		tRuntime += time.Since(t1)
		tDirect += t1.Sub(t0)
		n++
	}
	b.ReportMetric(float64(tDirect.Nanoseconds())/float64(n), "direct-ns/call")
	b.ReportMetric(float64(tRuntime.Nanoseconds())/float64(n), "runtime-ns/call")
	b.ReportMetric(float64(tRuntime)/float64(tDirect), "ratio")
	b.ReportMetric(float64((tRuntime-tDirect).Nanoseconds())/float64(n), "overhead-ns/call")
}
