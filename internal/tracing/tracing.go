// Package tracing records each tool call as OpenTelemetry spans and exports
// them over OTLP/HTTP when the standard environment asks for it:
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set.
// Otherwise tracing is off and installs nothing on the call path.
//
// One call is a root span "tools/call <canonical>" (plain "tools/call" when
// the name did not resolve) with the pipeline's stages nested below it in
// their fixed order: audit → loop_guard → resolve → validate → policy →
// execute. The tool calls a skill makes are calls of their own, children of
// the skill's execute span. Spans carry the provider, canonical tool, the MCP
// tool the client called, the decision and the outcome (ok or the error
// code); never argument values, results, error messages, identities or
// tokens, and every string passes through internal/redact first.
//
// Only OTLP over HTTP is supported (http/protobuf, the default, or
// http/json): the gRPC exporter would add a gRPC client and its connection
// management for one optional feature. OTEL_EXPORTER_OTLP_PROTOCOL=grpc
// leaves tracing off with a warning, and doctor says why.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agent-tools/agent-tools/internal/pipeline"
)

// ServiceName is service.name unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES say otherwise.
const ServiceName = "agent-tools"

// ShutdownTimeout bounds the final flush when serve exits: a collector
// that is down must not hold the process.
const ShutdownTimeout = 5 * time.Second

// State is what the environment asks for, as doctor reports it.
type State struct {
	On bool
	// Protocol is http/protobuf or http/json.
	Protocol string
	// Endpoint is the traces endpoint as scheme://host[:port]: never its
	// path, query, user info or the headers sent with it.
	Endpoint string
	// Problem says why traces are off although an endpoint is set.
	Problem string
}

// String is doctor's line: "off", "OTLP http/protobuf to https://host:4318",
// or "off: <problem>".
func (s State) String() string {
	switch {
	case s.On:
		return "OTLP " + s.Protocol + " to " + s.Endpoint
	case s.Problem != "":
		return "off: " + s.Problem
	}
	return "off"
}

// Detect reads the standard OpenTelemetry variables that decide whether
// traces are on. The exporter and the SDK read the rest themselves (headers,
// timeout, TLS, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, ...).
func Detect(env func(string) (string, bool)) State {
	get := func(k string) string { v, _ := env(k); return strings.TrimSpace(v) }
	// The Go SDK does not implement OTEL_SDK_DISABLED; the spec says it
	// turns the SDK off, so we do.
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return State{}
	}
	endpoint := first(get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), get("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if endpoint == "" {
		return State{}
	}
	switch exp := strings.ToLower(first(get("OTEL_TRACES_EXPORTER"), "otlp")); exp {
	case "otlp":
	case "none":
		return State{}
	default:
		return State{Problem: fmt.Sprintf("OTEL_TRACES_EXPORTER=%s is not supported (only otlp)", exp)}
	}
	proto := strings.ToLower(first(get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), get("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf"))
	switch proto {
	case "http/protobuf", "http/json": // what otlptracehttp speaks
	default:
		return State{Problem: fmt.Sprintf("OTLP protocol %q is not supported: only http/protobuf or http/json (set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and the collector's HTTP port, usually 4318)", proto)}
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never echo the value: it may carry credentials.
		return State{Problem: "the OTLP endpoint is not an http:// or https:// URL"}
	}
	return State{On: true, Protocol: proto, Endpoint: u.Scheme + "://" + u.Host}
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Tracing is the process's tracing: a tracer provider exporting over
// OTLP/HTTP when on, nothing when off.
type Tracing struct {
	state    State
	provider *sdktrace.TracerProvider // nil when off
	hook     *Hook
}

// Setup turns tracing on when the environment asks for it (Detect). env
// decides on or off; the OpenTelemetry exporter and SDK read their own
// settings from the process environment, as every OpenTelemetry SDK does.
// Off is not an error: a protocol we cannot speak is logged and leaves
// tracing off, so a tracing setting never stops the server.
func Setup(ctx context.Context, env func(string) (string, bool), version string, log *slog.Logger) (*Tracing, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st := Detect(env)
	if !st.On {
		if st.Problem != "" {
			log.Warn("OpenTelemetry traces are off", "reason", st.Problem)
		}
		return &Tracing{state: st}, nil
	}
	exp, err := otlptracehttp.New(ctx) // honours OTEL_EXPORTER_OTLP_* itself
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := Resource(ctx, version)
	if err != nil {
		return nil, err
	}
	// No WithSampler: the SDK then applies OTEL_TRACES_SAMPLER(_ARG), and
	// defaults to parentbased_always_on.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	// W3C trace context only: baggage could carry anything across.
	otel.SetTextMapPropagator(propagation.TraceContext{})
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("OpenTelemetry", "err", err) // export failures: the log is redacted
	}))
	log.Info("OpenTelemetry traces on", "exporter", st.String())
	return &Tracing{state: st, provider: tp, hook: NewHook(tp)}, nil
}

// Resource names the service: service.name agent-tools and service.version,
// overridden by OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the SDK's
// environment detector runs last, so it wins).
func Resource(ctx context.Context, version string) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", ServiceName), attribute.String("service.version", version)),
		resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	// A partial resource (say, one malformed OTEL_RESOURCE_ATTRIBUTES pair)
	// is still the right one; the SDK reports the rest.
	return res, nil
}

// State is what was asked for and whether tracing is on.
func (t *Tracing) State() State { return t.state }

// Tracer is the pipeline hook, nil when tracing is off: then nothing is
// installed on the call path (pipeline.Options.Tracer).
func (t *Tracing) Tracer() pipeline.Tracer {
	if t == nil || t.hook == nil {
		return nil // not a typed nil: the pipeline tests Tracer == nil
	}
	return t.hook
}

// Shutdown flushes the spans still queued and stops the exporter, bounded
// by ShutdownTimeout (or ctx, if sooner). Off, it does nothing.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.provider == nil {
		return nil
	}
	// serve's own context is cancelled by then: flush on a fresh one.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	err := t.provider.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("flushing traces: the collector did not answer within %s", ShutdownTimeout)
	}
	if err != nil {
		return fmt.Errorf("flushing traces: %w", err)
	}
	return nil
}
