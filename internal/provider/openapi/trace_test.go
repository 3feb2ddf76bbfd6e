package openapi

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// With traces on (internal/tracing sets the W3C propagator), a REST call
// carries the calling span as traceparent; off, no header is added.
func TestTraceparentOnlyWithTracesOn(t *testing.T) {
	b := newBackend(t, nil)
	p := petsProvider(t, b, nil)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	get := func() string {
		t.Helper()
		if _, err := p.Call(ctx, catalog.Tool{Provider: "pets", Name: "pets/get"}, json.RawMessage(`{"petId":"1"}`)); err != nil {
			t.Fatal(err)
		}
		return b.last(t).Header.Get("traceparent")
	}
	if h := get(); h != "" {
		t.Fatalf("traces off, yet traceparent %q", h)
	}
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	if h, want := get(), "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01"; h != want {
		t.Fatalf("traceparent = %q, want %q", h, want)
	}
}
