package tracing_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/tracing"
)

// collector is an OTLP/HTTP trace receiver on 127.0.0.1: it decodes each
// protobuf export and announces the span names it carried.
type collector struct {
	srv   *httptest.Server
	mu    sync.Mutex
	res   []string // resource attributes, key=value
	names chan []string
}

func newCollector(t *testing.T) *collector {
	c := &collector{names: make(chan []string, 16)}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
			t.Errorf("collector: bad export %s %s", r.URL.Path, r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var names []string
		for _, rs := range req.ResourceSpans {
			c.mu.Lock()
			for _, kv := range rs.Resource.Attributes {
				c.res = append(c.res, kv.Key+"="+kv.Value.GetStringValue())
			}
			c.mu.Unlock()
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Write(out)
		c.names <- names
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// await collects exported span names until want is seen, or fails after a bound.
func (c *collector) await(t *testing.T, want string) []string {
	t.Helper()
	var all []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case names := <-c.names:
			all = append(all, names...)
			for _, n := range names {
				if n == want {
					return all
				}
			}
		case <-deadline:
			t.Fatalf("no span %q exported within 10s (got %v)", want, all)
		}
	}
}

func osEnv(t *testing.T, env map[string]string) func(string) (string, bool) {
	// The exporter and the SDK read the process environment themselves.
	for k, v := range env {
		t.Setenv(k, v)
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestSpansAreExportedOverOTLPHTTP(t *testing.T) {
	c := newCollector(t)
	env := osEnv(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": c.srv.URL,
		"OTEL_BSP_SCHEDULE_DELAY":     "20", // ms: exported soon after the call
		"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment=test",
	})
	tc, err := tracing.Setup(context.Background(), env, "1.2.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tc.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if !tc.State().On || tc.Tracer() == nil || tc.State().String() != "OTLP http/protobuf to "+c.srv.URL {
		t.Fatalf("state = %s", tc.State())
	}
	tr := newTraced(t, policy.Rules{}, tc.Tracer())
	if resp := tr.run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(`{"n":1}`)}); resp.Failed() {
		t.Fatal(resp.Err)
	}
	names := c.await(t, "tools/call svc_read")
	for _, s := range stages {
		if !strings.Contains(strings.Join(names, ","), s) {
			t.Errorf("stage %s not exported: %v", s, names)
		}
	}
	c.mu.Lock()
	res := strings.Join(c.res, " ")
	c.mu.Unlock()
	for _, want := range []string{"service.name=agent-tools", "service.version=1.2.3", "deployment.environment=test"} {
		if !strings.Contains(res, want) {
			t.Errorf("resource %q lacks %s", res, want)
		}
	}
}

// With an hour's batching delay nothing leaves before Shutdown, and
// everything has left when it returns.
func TestShutdownFlushes(t *testing.T) {
	c := newCollector(t)
	env := osEnv(t, map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": c.srv.URL + "/v1/traces",
		"OTEL_BSP_SCHEDULE_DELAY":            "3600000",
		"OTEL_SERVICE_NAME":                  "tools-edge",
	})
	tc, err := tracing.Setup(context.Background(), env, "1.2.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTraced(t, policy.Rules{}, tc.Tracer())
	tr.run(context.Background(), &pipeline.Request{Tool: "svc_write"})
	select {
	case names := <-c.names:
		t.Fatalf("exported before shutdown: %v", names)
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve's context is done by the time it flushes
	if err := tc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case names := <-c.names: // sent before Shutdown returned
		if len(names) != 7 || names[len(names)-1] != "tools/call svc_write" {
			t.Fatalf("flushed %v", names)
		}
	default:
		t.Fatal("Shutdown returned before the spans were exported")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if res := strings.Join(c.res, " "); !strings.Contains(res, "service.name=tools-edge") {
		t.Errorf("OTEL_SERVICE_NAME not honoured: %s", res)
	}
}

// A collector that never answers cannot hold the process: Shutdown gives
// up after its bound.
func TestShutdownIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the shutdown bound")
	}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	env := osEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_BSP_SCHEDULE_DELAY": "3600000", "OTEL_EXPORTER_OTLP_TIMEOUT": "60000"})
	tc, err := tracing.Setup(context.Background(), env, "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	newTraced(t, policy.Rules{}, tc.Tracer()).run(context.Background(), &pipeline.Request{Tool: "svc_read"})
	start := time.Now()
	err = tc.Shutdown(context.Background())
	if took := time.Since(start); err == nil || took > tracing.ShutdownTimeout+2*time.Second {
		t.Fatalf("Shutdown took %s, err %v", took, err)
	}
}
