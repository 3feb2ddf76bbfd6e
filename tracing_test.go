package agenttools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	agenttools "github.com/agent-tools/agent-tools"
)

// TestTracerProvider: an embedding program's OpenTelemetry provider gets a
// root span per call with the pipeline's stages as children, and never the
// arguments.
func TestTracerProvider(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	rt := newRT(t, agenttools.Options{TracerProvider: tp})
	if err := rt.AddPlugin("svc", agenttools.PluginOptions{NoConfirm: true}); err != nil {
		t.Fatal(err)
	}
	must(t, rt.AddTool(&agenttools.Tool{Namespace: "svc", Action: "echo", Description: "Echo."}, func(_ context.Context, _ *agenttools.CallInfo, args json.RawMessage) (any, error) {
		return "ok", nil
	}))
	start(t, rt)
	const canary = "canary-7f3a9"
	if _, err := rt.Call(context.Background(), "svc_echo", map[string]any{"secret": canary}); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	var names []string
	root := -1
	for i, s := range spans {
		names = append(names, s.Name)
		if s.Name == "tools/call svc_echo" {
			root = i
		}
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.String(), canary) {
				t.Errorf("span %q carries the argument value in %s", s.Name, a.Key)
			}
		}
	}
	if root < 0 {
		t.Fatalf("no root span among %q", names)
	}
	for _, stage := range []string{"audit", "loop_guard", "resolve", "validate", "policy", "execute"} {
		if !slices.Contains(names, stage) {
			t.Errorf("no %q span among %q", stage, names)
		}
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != spans[root].SpanContext.TraceID() {
			t.Errorf("span %q is in another trace", s.Name)
		}
	}
}
