package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/openapi"
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
	ct, st := sdk.NewInMemoryTransports()
	ss, err := a.Facade.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "agent_tools_pets_call", Arguments: map[string]any{"toolName": "pets/get", "arguments": map[string]any{"petId": "7"}}}
	client := &http.Client{}
	direct := func() {
		resp, err := client.Get(srv.URL + "/v1/pets/7")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	viaRuntime := func() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	// The provider alone (argument mapping, request, result shaping), no pipeline or MCP.
	alone := openapi.New(openapi.Options{Header: provider.Header{ID: "pets"}, Spec: spec, BaseURL: srv.URL + "/v1"})
	if err := alone.Start(ctx); err != nil {
		b.Fatal(err)
	}
	tool := catalog.Tool{Provider: "pets", Name: "pets/get"}
	args := json.RawMessage(`{"petId":"7"}`)
	viaProvider := func() {
		if res, err := alone.Call(ctx, tool, args); err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	direct()
	viaProvider()
	viaRuntime()
	var tDirect, tProvider, tRuntime time.Duration
	n := 0
	timed := func(f func()) time.Duration { t := time.Now(); f(); return time.Since(t) }
	for b.Loop() {
		// Rotate the order so that no variant always runs right after the
		// runtime's call (whose goroutines may still be winding down).
		switch n % 3 {
		case 0:
			tDirect += timed(direct)
			tProvider += timed(viaProvider)
			tRuntime += timed(viaRuntime)
		case 1:
			tProvider += timed(viaProvider)
			tRuntime += timed(viaRuntime)
			tDirect += timed(direct)
		default:
			tRuntime += timed(viaRuntime)
			tDirect += timed(direct)
			tProvider += timed(viaProvider)
		}
		n++
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(tDirect), "direct-ns/call")
	b.ReportMetric(per(tProvider), "provider-ns/call")
	b.ReportMetric(per(tRuntime), "runtime-ns/call")
	b.ReportMetric(float64(tProvider)/float64(tDirect), "provider-ratio")
	b.ReportMetric(float64(tRuntime)/float64(tDirect), "runtime-ratio")
}
