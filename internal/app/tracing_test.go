package app_test

import (
	"context"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/tracing"
	"github.com/agent-tools/agent-tools/internal/transport"
)

// A secret interpolated from the environment (${API_TOKEN} in a provider's
// env) and another passed as an argument reach the tool, which prints both
// and fails; the exported spans hold neither, while still naming the call.
func TestTracesCarryNoSecretsEndToEnd(t *testing.T) {
	const envCanary, argCanary = "env-canary-5d2c81f4", "arg-canary-9e7ab310"
	p := newProject(t)
	p.file(t, "agent-tools.yaml", `providers:
  - id: penv
    kind: cli
    allow: [printenv]
    env: { API_TOKEN: "${API_TOKEN}" }
    tools:
      - name: show
        description: Print the token, then a variable that is not set (so it fails).
        argv: [printenv, API_TOKEN, "{name}"]
        params: { name: { type: string, required: true } }
        readonly: true
`)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: p.dir, Mode: "flat", AuditDefault: io.Discard, Tracer: tracing.NewHook(tp),
		Env: func(k string) (string, bool) {
			if k == "API_TOKEN" {
				return envCanary, true
			}
			return "", false
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := a.Facade.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "penv_show", Arguments: map[string]any{"name": argCanary}})
	if err != nil {
		t.Fatal(err)
	}
	// The tool did print the secret: the runtime shows it as [redacted: API_TOKEN].
	if !res.IsError || strings.Contains(text(res), envCanary) || !strings.Contains(text(res), "[redacted: API_TOKEN]") {
		t.Fatalf("the tool should fail, having printed the scrubbed token: %s", text(res))
	}
	spans := exp.GetSpans()
	var root *tracetest.SpanStub
	for i, s := range spans {
		dump := fmt.Sprintf("%s %v %v %v %v", s.Name, s.Attributes, s.Events, s.Status, s.Resource.Attributes())
		if strings.Contains(dump, envCanary) || strings.Contains(dump, argCanary) {
			t.Errorf("span %q leaks a secret: %s", s.Name, dump)
		}
		if s.Name == "tools/call penv_show" {
			root = &spans[i]
		}
	}
	// The call and its eight stages (result_guard: security.results is on by default).
	if len(spans) != 9 || root == nil || root.Status.Description != "BACKEND_ERROR" {
		t.Fatalf("spans: %d, root %+v", len(spans), root)
	}
}

// withHeader adds a header to every request (the client's tracing).
type withHeader struct{ k, v string }

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.k, h.v)
	return http.DefaultTransport.RoundTrip(r)
}

// Over Streamable HTTP, a client's traceparent header makes the call's span
// a child of the client's span, in the client's trace.
func TestHTTPCallContinuesTheClientsTrace(t *testing.T) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	p := newProject(t)
	p.script(t, "hello", "#!/bin/sh\n# @description Say hello.\n# @readonly\necho hello\n")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: p.dir, Mode: "flat", AuditDefault: io.Discard, Tracer: tracing.NewHook(tp)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h, err := transport.NewHTTP(a.HTTPOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: withHeader{"traceparent", "00-" + traceID + "-" + spanID + "-01"}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + transport.MCPPath, HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "hello"})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	spans := exp.GetSpans()
	root := spans[len(spans)-1]
	if root.Name != "tools/call hello" || root.SpanContext.TraceID().String() != traceID || root.Parent.SpanID().String() != spanID || !root.Parent.IsRemote() {
		t.Fatalf("root %q in trace %s, parent %s", root.Name, root.SpanContext.TraceID(), root.Parent.SpanID())
	}
}
