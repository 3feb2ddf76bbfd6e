package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Scope is the instrumentation scope of every span.
const Scope = "github.com/agent-tools/agent-tools/internal/tracing"

// Span names and attribute keys. The root span follows the MCP semantic
// conventions where they exist (mcp.method.name, gen_ai.*, error.type); the
// rest is ours, under agent_tools.*.
const (
	CallSpan = "tools/call" // + " <canonical>" once resolved

	AttrMethod    = "mcp.method.name"       // always "tools/call"
	AttrOperation = "gen_ai.operation.name" // always "execute_tool"
	AttrTool      = "gen_ai.tool.name"      // canonical name, when resolved
	AttrErrorType = "error.type"            // the error code, on failure
	AttrProvider  = "agent_tools.provider"  // provider id, when resolved
	AttrVia       = "agent_tools.via"       // the MCP tool the client called
	AttrSkill     = "agent_tools.skill"     // true for a skill run
	AttrDecision  = "agent_tools.decision"  // allowed, confirmed, denied, ...
	AttrOutcome   = "agent_tools.outcome"   // ok or the error code
	AttrIsError   = "agent_tools.is_error"  // the call failed in any way
	AttrSession   = "agent_tools.session"   // a hash prefix of the session id, never the id
)

// Hook is the pipeline.Tracer over an OpenTelemetry tracer provider.
type Hook struct{ tracer trace.Tracer }

var _ pipeline.Tracer = (*Hook)(nil)

// NewHook traces calls with tp (tests pass one over an in-memory exporter).
func NewHook(tp trace.TracerProvider) *Hook { return &Hook{tracer: tp.Tracer(Scope)} }

// callState is one call's, shared by its stage spans through ctx: how deep
// the call went, so that the stage a failure came from (the deepest one
// entered) gets the error status and its callers do not.
type callState struct{ entered int }

type stateKey struct{}

var staticAttrs = []attribute.KeyValue{attribute.String(AttrMethod, "tools/call"), attribute.String(AttrOperation, "execute_tool")}

// Call opens the call's root span. A call made inside another one (a
// skill's tool calls) is its child through ctx; a top-level call is a
// server span, the child of the trace context the client sent (HTTP
// traceparent header) if there is one.
func (h *Hook) Call(next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
		kind := trace.SpanKindServer
		if p := trace.SpanContextFromContext(ctx); p.IsValid() && !p.IsRemote() {
			kind = trace.SpanKindInternal
		} else if req.TraceParent != "" && !p.IsValid() {
			// Continue the HTTP client's trace. The W3C propagator is used
			// directly (not the global one): it validates the header strictly
			// and carries no baggage.
			ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": req.TraceParent, "tracestate": req.TraceState})
		}
		ctx, span := h.tracer.Start(ctx, CallSpan, trace.WithSpanKind(kind), trace.WithAttributes(staticAttrs...))
		defer span.End()
		if !span.IsRecording() { // sampled out: no stage spans either
			if ctx.Value(stateKey{}) != nil { // nor spans in the state of the call that made this one
				ctx = context.WithValue(ctx, stateKey{}, (*callState)(nil))
			}
			return next(ctx, req)
		}
		resp := next(context.WithValue(ctx, stateKey{}, &callState{}), req)
		finish(span, req, resp)
		return resp
	}
}

// Stage opens a span for one stage and everything below it.
func (h *Hook) Stage(name string, next pipeline.Handler) pipeline.Handler {
	return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
		st, _ := ctx.Value(stateKey{}).(*callState)
		if st == nil { // not under a recording call span
			return next(ctx, req)
		}
		st.entered++
		depth := st.entered
		ctx, span := h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
		resp := next(ctx, req)
		if st.entered == depth && resp.Failed() { // nothing below ran: this stage answered
			span.SetStatus(codes.Error, outcome(resp))
		}
		span.End()
		return resp
	}
}

// finish names the root span and sets what is known once the call is done.
// Only bounded, non-secret values: names from the catalog, fixed words and
// codes, a hash of the session id; each string scrubbed all the same.
func finish(span trace.Span, req *pipeline.Request, resp *pipeline.Response) {
	out := outcome(resp)
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, attribute.String(AttrOutcome, out), attribute.Bool(AttrIsError, resp.Failed()))
	if tool := redact.String(req.Resolved.Canonical); tool != "" {
		span.SetName(CallSpan + " " + tool)
		attrs = append(attrs, attribute.String(AttrTool, tool), attribute.String(AttrProvider, redact.String(req.Resolved.Provider)))
	}
	if req.Via != "" {
		attrs = append(attrs, attribute.String(AttrVia, redact.String(text.Clip(req.Via, 128))))
	}
	if req.Skill {
		attrs = append(attrs, attribute.Bool(AttrSkill, true))
	}
	if resp.Decision != "" {
		attrs = append(attrs, attribute.String(AttrDecision, resp.Decision))
	}
	if req.Session != "" {
		sum := sha256.Sum256([]byte(req.Session))
		attrs = append(attrs, attribute.String(AttrSession, hex.EncodeToString(sum[:6])))
	}
	if resp.Failed() {
		attrs = append(attrs, attribute.String(AttrErrorType, out))
		span.SetStatus(codes.Error, out) // the code, never the message: it may quote arguments
	}
	span.SetAttributes(attrs...)
}

// outcome is "ok" or the error code, as the metrics label it.
func outcome(resp *pipeline.Response) string {
	switch {
	case resp.Err != nil:
		return string(resp.Err.Code)
	case resp.Failed():
		return string(toolerr.BackendError)
	}
	return "ok"
}
