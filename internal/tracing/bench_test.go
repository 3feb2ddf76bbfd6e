package tracing_test

import (
	"context"
	"encoding/json"
	"github.com/agent-tools/agent-tools/internal/policy"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tracing"
)

// echo is a provider that answers at once and keeps nothing (the fake
// provider records every call, which would grow with b.N).
type echo struct{}

var _ provider.Provider = echo{}

func (echo) Info() catalog.ProviderInfo { return catalog.ProviderInfo{ID: "svc"} }
func (echo) Tools(context.Context) ([]catalog.Tool, error) {
	return []catalog.Tool{{Provider: "svc", Name: "read", InputSchema: json.RawMessage(schema), ReadOnly: true}}, nil
}
func (echo) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{Text: "ok"}, nil
}

func benchPipeline(b *testing.B, tracer pipeline.Tracer) pipeline.Handler {
	reg := registry.New(nil)
	if err := reg.Add(echo{}); err != nil {
		b.Fatal(err)
	}
	reg.Refresh(context.Background())
	return pipeline.New(pipeline.Options{Catalog: reg, Tracer: tracer})
}

// onTracer is tracing as serve runs it (a batch span processor), exporting
// into memory; reset, every 128 calls, keeps the exporter from growing
// with b.N (and its copying from dominating the figure).
func onTracer(b *testing.B) (pipeline.Tracer, func()) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	b.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	})
	return tracing.NewHook(tp), exp.Reset
}

var args = json.RawMessage(`{"n":1}`)

func call(run pipeline.Handler) {
	if resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s"}, Via: "call_tool", Tool: "svc_read", Args: args}); resp.Failed() {
		panic(resp.Err)
	}
}

// BenchmarkPipelineTracing runs the same call with tracing off (no Tracer:
// the plain pipeline) and on (every call a root span and six stage spans,
// batched to an in-memory exporter), interleaved so that both see the same
// machine, and reports both costs per call and their ratio.
func BenchmarkPipelineTracing(b *testing.B) {
	off := benchPipeline(b, nil)
	tr, reset := onTracer(b)
	on := benchPipeline(b, tr)
	var offT, onT time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		call(off)
		t1 := time.Now()
		call(on)
		onT += time.Since(t1)
		offT += t1.Sub(t0)
		if n++; n%128 == 0 {
			reset()
		}
	}
	b.ReportMetric(float64(offT.Nanoseconds())/float64(n), "off-ns/call")
	b.ReportMetric(float64(onT.Nanoseconds())/float64(n), "on-ns/call")
	b.ReportMetric(float64(onT)/float64(offT), "on/off")
}

// BenchmarkPipelineTracingAllocs is each side alone, for allocations.
func BenchmarkPipelineTracingAllocs(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		run := benchPipeline(b, nil)
		b.ReportAllocs()
		for b.Loop() {
			call(run)
		}
	})
	b.Run("on", func(b *testing.B) {
		tr, reset := onTracer(b)
		run := benchPipeline(b, tr)
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			call(run)
			if n++; n%128 == 0 {
				reset()
			}
		}
	})
}
