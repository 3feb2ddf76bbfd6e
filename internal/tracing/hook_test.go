package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/tracing"
)

const schema = `{"type":"object","properties":{"token":{"type":"string"},"n":{"type":"integer"}},"additionalProperties":false}`

var stages = []string{"audit", "loop_guard", "resolve", "access", "validate", "policy", "execute"}

// traced is a pipeline over a fake provider "svc" (read: read-only, write:
// mutating, fail: reports an error, recipe: a skill calling tools), traced
// synchronously into an in-memory exporter.
type traced struct {
	run  pipeline.Handler
	exp  *tracetest.InMemoryExporter
	fake *providertest.Fake
}

func newTraced(t testing.TB, rules policy.Rules, tracer pipeline.Tracer) *traced {
	t.Helper()
	fake := providertest.New(catalog.ProviderInfo{ID: "svc", RequireConfirm: true, Timeout: time.Second},
		providertest.Tool("read", "Read things", schema, true),
		providertest.Tool("write", "Write things", schema, false),
		providertest.Tool("fail", "Fails", schema, true))
	fake.SetSkills(catalog.Skill{Name: "recipe", Description: "Reads twice"})
	fake.Func = func(_ context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		if tool.Name == "fail" { // echoes its arguments into the error, as real tools do
			return &provider.Result{Text: "failed with " + string(args), IsError: true}, nil
		}
		return &provider.Result{Text: "ok " + string(args)}, nil
	}
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	tr := &traced{exp: tracetest.NewInMemoryExporter(), fake: fake}
	if tracer == nil {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tr.exp))
		t.Cleanup(func() {
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Error(err)
			}
		})
		tracer = tracing.NewHook(tp)
	}
	tr.run = pipeline.New(pipeline.Options{Catalog: reg, Rules: rules, Tracer: tracer,
		Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	return tr
}

// CallTool runs a skill's tool calls back through the same pipeline.
func (tr *traced) CallTool(ctx context.Context, canonical string, args json.RawMessage) (*provider.Result, error) {
	resp := tr.run(ctx, &pipeline.Request{Via: "skill:svc:recipe", Tool: canonical, Args: args})
	if resp.Err != nil {
		return nil, resp.Err
	}
	return resp.Result, nil
}

func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// chain checks that spans are root → audit → … → the last stage entered,
// each the child of the one before, in one trace, and returns them.
func chain(t *testing.T, spans tracetest.SpanStubs, root tracetest.SpanStub, want []string) []tracetest.SpanStub {
	t.Helper()
	byParent := map[trace.SpanID][]tracetest.SpanStub{}
	for _, s := range spans {
		byParent[s.Parent.SpanID()] = append(byParent[s.Parent.SpanID()], s)
	}
	var out []tracetest.SpanStub
	parent := root
	for _, name := range want {
		var found *tracetest.SpanStub
		for _, c := range byParent[parent.SpanContext.SpanID()] {
			if c.Name == name {
				found = &c
			}
		}
		if found == nil {
			t.Fatalf("no span %q under %q", name, parent.Name)
		}
		if found.SpanContext.TraceID() != root.SpanContext.TraceID() || found.StartTime.Before(parent.StartTime) || found.EndTime.After(parent.EndTime) {
			t.Errorf("span %q is not nested in %q", name, parent.Name)
		}
		out = append(out, *found)
		parent = *found
	}
	if kids := byParent[parent.SpanContext.SpanID()]; len(kids) > 0 && parent.Name != "execute" {
		t.Errorf("%q has children %q: stages below it ran", parent.Name, kids[0].Name)
	}
	return out
}

func TestCallSpans(t *testing.T) {
	tests := []struct {
		name     string
		rules    policy.Rules
		req      pipeline.Request
		span     string
		attrs    map[string]string
		stages   int    // how many of the seven stages ran
		failedAt string // the stage span with the error status
	}{
		{"ok", policy.Rules{}, pipeline.Request{Via: "call_tool", Tool: "svc_read", Args: json.RawMessage(`{"n":1}`)}, "tools/call svc_read",
			map[string]string{"gen_ai.tool.name": "svc_read", "agent_tools.provider": "svc", "agent_tools.via": "call_tool", "agent_tools.decision": "allowed",
				"agent_tools.outcome": "ok", "agent_tools.is_error": "false", "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool"}, 7, ""},
		{"invalid arguments", policy.Rules{}, pipeline.Request{Tool: "svc_read", Args: json.RawMessage(`{"n":"x"}`)}, "tools/call svc_read",
			map[string]string{"agent_tools.outcome": "INVALID_ARGUMENTS", "error.type": "INVALID_ARGUMENTS", "agent_tools.is_error": "true", "agent_tools.decision": "invalid"}, 5, "validate"},
		{"unknown tool", policy.Rules{}, pipeline.Request{Tool: "svc_nope"}, "tools/call",
			map[string]string{"agent_tools.outcome": "UNKNOWN_TOOL", "gen_ai.tool.name": ""}, 3, "resolve"},
		{"denied", policy.Rules{Deny: []string{"svc_read"}}, pipeline.Request{Tool: "svc_read"}, "tools/call svc_read",
			map[string]string{"agent_tools.outcome": "UNKNOWN_TOOL", "agent_tools.decision": "denied"}, 4, "access"},
		{"confirmation required", policy.Rules{}, pipeline.Request{Tool: "svc_write", Args: json.RawMessage(`{"n":1}`)}, "tools/call svc_write",
			map[string]string{"agent_tools.outcome": "CONFIRMATION_REQUIRED", "agent_tools.decision": "confirmation_required"}, 6, "policy"},
		{"confirmed", policy.Rules{}, pipeline.Request{Tool: "svc_write", Confirm: true}, "tools/call svc_write",
			map[string]string{"agent_tools.outcome": "ok", "agent_tools.decision": "confirmed"}, 7, ""},
		{"tool reports an error", policy.Rules{}, pipeline.Request{Tool: "svc_fail"}, "tools/call svc_fail",
			map[string]string{"agent_tools.outcome": "BACKEND_ERROR", "agent_tools.is_error": "true"}, 7, "execute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraced(t, tc.rules, nil)
			tr.run(context.Background(), &tc.req)
			spans := tr.exp.GetSpans()
			if len(spans) != tc.stages+1 {
				t.Fatalf("got %d spans, want %d", len(spans), tc.stages+1)
			}
			root := spans[len(spans)-1] // ends last
			if root.Name != tc.span || root.Parent.IsValid() || root.SpanKind != trace.SpanKindServer {
				t.Fatalf("root = %q (parent %v, kind %v)", root.Name, root.Parent.SpanID(), root.SpanKind)
			}
			got := attrs(root)
			for k, v := range tc.attrs {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if wantErr := tc.attrs["agent_tools.outcome"] != "ok"; wantErr != (root.Status.Code == codes.Error) ||
				(wantErr && root.Status.Description != tc.attrs["agent_tools.outcome"]) {
				t.Errorf("root status = %+v", root.Status)
			}
			for _, s := range chain(t, spans, root, stages[:tc.stages]) {
				if failed := s.Status.Code == codes.Error; failed != (s.Name == tc.failedAt) {
					t.Errorf("stage %s status = %+v, failure was at %q", s.Name, s.Status, tc.failedAt)
				}
			}
		})
	}
}

func TestSkillCallsNestUnderTheSkillsExecuteSpan(t *testing.T) {
	tr := newTraced(t, policy.Rules{}, nil)
	resp := tr.run(context.Background(), &pipeline.Request{Skill: true, Provider: "svc", Tool: "recipe", SkillCalls: tr,
		Args: json.RawMessage(`{"tools":["svc_read","svc_read"],"args":{"n":2}}`)})
	if resp.Failed() {
		t.Fatalf("skill failed: %+v", resp.Err)
	}
	spans := tr.exp.GetSpans()
	if len(spans) != 3*8 {
		t.Fatalf("got %d spans, want 24 (a skill run and two calls, 8 each)", len(spans))
	}
	root := spans[len(spans)-1]
	if root.Name != "tools/call svc_recipe" || attrs(root)["agent_tools.skill"] != "true" {
		t.Fatalf("root = %q %v", root.Name, attrs(root))
	}
	execute := chain(t, spans, root, stages)[len(stages)-1]
	var inner []tracetest.SpanStub
	for _, s := range spans {
		if s.Parent.SpanID() == execute.SpanContext.SpanID() {
			inner = append(inner, s)
		}
	}
	if len(inner) != 2 {
		t.Fatalf("execute has %d children, want the skill's 2 calls", len(inner))
	}
	for _, c := range inner {
		if c.Name != "tools/call svc_read" || c.SpanKind != trace.SpanKindInternal || attrs(c)["agent_tools.via"] != "skill:svc:recipe" {
			t.Errorf("inner call = %q kind %v %v", c.Name, c.SpanKind, attrs(c))
		}
		chain(t, spans, c, stages)
	}
}

// The canary is in the arguments, the session id, the name the client
// called and the tool's error output; it must appear nowhere in what is
// exported. The runtime knows it as a secret (as it knows every ${VAR}
// interpolated into a secret-bearing place), so even the fields that carry
// client-supplied text are scrubbed.
func TestSpansNeverCarryArgumentsOrSecrets(t *testing.T) {
	const canary = "canary-3b1f9e0a7c"
	redact.Add("CANARY_TOKEN", canary)
	tr := newTraced(t, policy.Rules{}, nil)
	args := json.RawMessage(`{"token":"` + canary + `"}`)
	for _, req := range []pipeline.Request{
		{Tool: "svc_read", Args: args, Caller: policy.Caller{Session: canary, Identity: "token:" + canary}, Via: "call_" + canary},
		{Tool: "svc_fail", Args: args, Caller: policy.Caller{Session: canary}},
		{Tool: "svc_write", Args: args},
		{Tool: "svc_" + canary, Args: args},
		{Tool: "svc_read", Args: json.RawMessage(`{"token":"` + canary + `","extra":1}`)},
	} {
		tr.run(context.Background(), &req)
	}
	spans := tr.exp.GetSpans()
	if len(spans) < 5 {
		t.Fatalf("only %d spans", len(spans))
	}
	for _, s := range spans {
		dump := fmt.Sprintf("%s %v %v %v %v %v", s.Name, s.Attributes, s.Events, s.Links, s.Status, s.Resource.Attributes())
		if strings.Contains(dump, canary) || strings.Contains(dump, "token") {
			t.Errorf("span %q leaks: %s", s.Name, dump)
		}
	}
}

func TestOffInstallsNothing(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	tc, err := tracing.Setup(context.Background(), env, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if tc.Tracer() != nil || tc.State().On || tc.State().String() != "off" {
		t.Fatalf("off: tracer %v, state %+v", tc.Tracer(), tc.State())
	}
	if err := tc.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The pipeline built with the off tracer is the plain chain: it costs
	// what a pipeline without tracing costs, allocation for allocation.
	plain, off := pipelineWith(t, nil), pipelineWith(t, tc.Tracer())
	call := func(run pipeline.Handler) func() {
		return func() {
			run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(`{"n":1}`)})
		}
	}
	// The fewest of a few measurements: under -race and a busy GC one run
	// can count an incidental allocation (seen once: 42 vs 43).
	least := func(f func()) float64 {
		m := testing.AllocsPerRun(200, f)
		for range 4 {
			m = min(m, testing.AllocsPerRun(200, f))
		}
		return m
	}
	if a, b := least(call(plain)), least(call(off)); a != b {
		t.Errorf("allocations per call: %v without a tracer, %v with tracing off", a, b)
	}
}

func pipelineWith(t testing.TB, tracer pipeline.Tracer) pipeline.Handler {
	t.Helper()
	fake := providertest.New(catalog.ProviderInfo{ID: "svc"}, providertest.Tool("read", "Read things", schema, true))
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	return pipeline.New(pipeline.Options{Catalog: reg, Tracer: tracer})
}

func TestSampledOutCallsRecordNothing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.NeverSample()))
	t.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	tr := newTraced(t, policy.Rules{}, tracing.NewHook(tp))
	if resp := tr.run(context.Background(), &pipeline.Request{Tool: "svc_read"}); resp.Failed() {
		t.Fatal(resp.Err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans exported", n)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{nil, "off"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:pw@collector.example:4318/base?k=v"}, "OTLP http/protobuf to https://collector.example:4318"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:1"}, "OTLP http/protobuf to http://127.0.0.1:4318"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}, "off"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, "off"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "OTLP http/protobuf to http://c:4318"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, `off: OTLP protocol "grpc" is not supported`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "OTLP http/protobuf to http://c:4318"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, "OTLP http/json to http://c:4318"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, `off: OTLP protocol "thrift" is not supported`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "zipkin"}, "off: OTEL_TRACES_EXPORTER=zipkin is not supported"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "off: the OTLP endpoint is not an http:// or https:// URL"},
	}
	for _, tc := range tests {
		got := tracing.Detect(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }).String()
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: got %q, want %q", tc.env, got, tc.want)
		}
		if strings.Contains(got, "pw") || strings.Contains(got, "k=v") {
			t.Errorf("%v: state shows credentials: %q", tc.env, got)
		}
	}
}

func newLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func TestSetupRefusesGRPCWithAWarning(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
	var logged strings.Builder
	tc, err := tracing.Setup(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "test", newLogger(&logged))
	if err != nil {
		t.Fatal(err)
	}
	if tc.Tracer() != nil || !strings.Contains(logged.String(), "only http/protobuf or http/json") {
		t.Fatalf("tracer %v, log %q", tc.Tracer(), logged.String())
	}
}

func TestIncomingTraceContextIsContinued(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name, traceparent string
		continued         bool
	}{
		{"valid", parent, true},
		{"malformed", "00-zz-00f067aa0ba902b7-01", false},
		{"none", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraced(t, policy.Rules{}, nil)
			tr.run(context.Background(), &pipeline.Request{Tool: "svc_read", TraceParent: tc.traceparent, TraceState: "vendor=1"})
			spans := tr.exp.GetSpans()
			root := spans[len(spans)-1]
			if root.SpanKind != trace.SpanKindServer {
				t.Errorf("kind = %v", root.SpanKind)
			}
			if !tc.continued {
				if root.Parent.IsValid() {
					t.Fatalf("root has parent %v", root.Parent)
				}
				return
			}
			if !root.Parent.IsRemote() || root.Parent.SpanID().String() != "00f067aa0ba902b7" ||
				root.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || root.SpanContext.TraceState().Get("vendor") != "1" {
				t.Fatalf("root %v, parent %v", root.SpanContext, root.Parent)
			}
			chain(t, spans, root, stages)
		})
	}
}

// rootsOnly samples spans without a parent: a skill's run is recorded, the
// calls it makes (children) are not.
type rootsOnly struct{}

func (rootsOnly) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if trace.SpanContextFromContext(p.ParentContext).IsValid() {
		return sdktrace.SamplingResult{Decision: sdktrace.Drop}
	}
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}
func (rootsOnly) Description() string { return "rootsOnly" }

// A skill's calls sampled out while the skill is recorded, made
// concurrently: they neither record stages nor touch the skill's own
// per-call state (-race).
func TestSampledOutCallsInsideARecordedSkill(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(rootsOnly{}))
	t.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	tr := newTraced(t, policy.Rules{}, tracing.NewHook(tp))
	parallel := callerFunc(func(ctx context.Context, canonical string, args json.RawMessage) (*provider.Result, error) {
		done := make(chan struct{})
		go func() { defer close(done); _, _ = tr.CallTool(ctx, canonical, args) }() // the outer call's result is what the test checks
		res, err := tr.CallTool(ctx, canonical, args)
		<-done
		return res, err
	})
	resp := tr.run(context.Background(), &pipeline.Request{Skill: true, Provider: "svc", Tool: "recipe", SkillCalls: parallel,
		Args: json.RawMessage(`{"tools":["svc_read","svc_read"],"args":{"n":2}}`)})
	if resp.Failed() {
		t.Fatal(resp.Err)
	}
	if spans := exp.GetSpans(); len(spans) != 1 || spans[0].Name != "tools/call svc_recipe" {
		t.Fatalf("exported %d spans, want the skill's root only", len(spans))
	}
}

type callerFunc func(ctx context.Context, canonical string, args json.RawMessage) (*provider.Result, error)

func (f callerFunc) CallTool(ctx context.Context, canonical string, args json.RawMessage) (*provider.Result, error) {
	return f(ctx, canonical, args)
}
