package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// serve over stdio with OTEL_EXPORTER_OTLP_ENDPOINT set exports the call's
// spans to the collector, at the latest when it exits: the batching delay
// here is an hour, so only the flush on exit can have sent them.
func TestServeExportsTracesOnExit(t *testing.T) {
	var mu sync.Mutex
	var names []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("collector: %v", err)
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	defer collector.Close()
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_BSP_SCHEDULE_DELAY": "3600000"}
	for k, v := range vars { // the exporter reads the process environment
		t.Setenv(k, v)
	}
	env, stdout, stderr := testEnv(t, vars)
	mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("mode: flat\nlocal: {enabled: false}\n"), 0o644)
	env.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"runtime_status","arguments":{}}}`,
	}, "\n") + "\n")
	if code := Run(context.Background(), env, []string{"serve"}); code != ExitOK {
		t.Fatalf("serve: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout.String(), `"id":2`) {
		t.Fatalf("no answer to the call:\n%s\n%s", stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(names, ",")
	if !strings.Contains(got, "tools/call runtime_status") || !strings.Contains(got, "execute") {
		t.Fatalf("exported spans: %v\n%s", names, stderr)
	}
}
