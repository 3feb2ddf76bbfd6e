package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/tokens"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

const schema = `{"type":"object","properties":{"token":{"type":"string"},"n":{"type":"integer"}},"additionalProperties":false}`

func newPipeline(t testing.TB, rules policy.Rules, audit *bytes.Buffer, fn func(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error)) (pipeline.Handler, *providertest.Fake) {
	fake := providertest.New(catalog.ProviderInfo{ID: "svc", RequireConfirm: true, Timeout: 50 * time.Millisecond},
		providertest.Tool("read", "Read things", schema, true),
		providertest.Tool("write", "Write things", schema, false))
	fake.Func = fn
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	o := pipeline.Options{Catalog: reg, Rules: rules, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second, MaxResultChars: 10}}
	if audit != nil {
		o.AuditTo = audit
	}
	return pipeline.New(o), fake
}

func TestAuditNeverHoldsArgumentValues(t *testing.T) {
	var audit bytes.Buffer
	run, _ := newPipeline(t, policy.Rules{}, &audit, nil)
	resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s1", Client: "c"}, Via: "v", Tool: "svc_read", Args: json.RawMessage(`{"token":"sekret-value"}`)})
	if resp.Failed() {
		t.Fatalf("call failed: %+v", resp.Err)
	}
	run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s1"}, Tool: "svc_write", Args: json.RawMessage(`{"token":"sekret-value"}`)})
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 2 || strings.Contains(audit.String(), "sekret") {
		t.Fatalf("audit = %s", audit.String())
	}
	var rec pipeline.AuditRecord
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Tool != "svc_write" || rec.Provider != "svc" || rec.Decision != "confirmation_required" || rec.Outcome != "error" ||
		rec.ErrorCode != "CONFIRMATION_REQUIRED" || rec.ArgsHash != pipeline.ArgsHash(json.RawMessage(`{"token":"sekret-value"}`)) {
		t.Fatalf("record = %+v", rec)
	}
}

func TestExecuteShapesResultsAndErrors(t *testing.T) {
	tests := []struct {
		name string
		fn   func(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error)
		code toolerr.Code
		text string
	}{
		{"truncated", func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
			return &provider.Result{Text: "héllo wörld, this is long"}, nil
		}, "", "héllo wörl\n[result truncated: showing 10 of 25 characters; ask for less output]"},
		{"timeout from provider deadline", func(ctx context.Context, _ catalog.Tool, _ json.RawMessage) (*provider.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, toolerr.Timeout, ""},
		{"typed provider error kept", func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
			return nil, toolerr.New(toolerr.ProviderUnavailable, "later", "down")
		}, toolerr.ProviderUnavailable, ""},
		{"plain error", func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
			return nil, context.Canceled
		}, toolerr.BackendError, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, _ := newPipeline(t, policy.Rules{}, nil, tc.fn)
			resp := run(context.Background(), &pipeline.Request{Tool: "svc_read"})
			if tc.code == "" {
				if resp.Err != nil || resp.Result.Text != tc.text {
					t.Fatalf("got %+v %+v", resp.Result, resp.Err)
				}
				return
			}
			if resp.Err == nil || resp.Err.Code != tc.code {
				t.Fatalf("got %+v, want %s", resp.Err, tc.code)
			}
		})
	}
}

func TestCancelledByClient(t *testing.T) {
	run, _ := newPipeline(t, policy.Rules{}, nil, func(ctx context.Context, _ catalog.Tool, _ json.RawMessage) (*provider.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if resp := run(ctx, &pipeline.Request{Tool: "svc_read"}); resp.Err == nil || resp.Err.Code != toolerr.Cancelled {
		t.Fatalf("got %+v", resp.Err)
	}
}

func TestPolicyModes(t *testing.T) {
	tests := []struct {
		name     string
		rules    policy.Rules
		req      pipeline.Request
		code     toolerr.Code
		decision string
	}{
		{"read-only needs nothing", policy.Rules{}, pipeline.Request{Tool: "svc_read"}, "", "allowed"},
		{"agent confirms", policy.Rules{}, pipeline.Request{Tool: "svc_write", Confirm: true}, "", "confirmed"},
		{"agent must confirm", policy.Rules{}, pipeline.Request{Tool: "svc_write"}, toolerr.ConfirmationRequired, "confirmation_required"},
		{"human mode without a human", policy.Rules{Confirm: policy.ConfirmHuman}, pipeline.Request{Tool: "svc_write", Confirm: true}, toolerr.Denied, "denied"},
		{"human approves", policy.Rules{Confirm: policy.ConfirmHuman}, pipeline.Request{Tool: "svc_write", AskHuman: yes}, "", "confirmed"},
		{"human declines", policy.Rules{}, pipeline.Request{Tool: "svc_write", Confirm: true, AskHuman: no}, toolerr.Denied, "denied"},
		{"elicitation broken falls back to the flag", policy.Rules{}, pipeline.Request{Tool: "svc_write", Confirm: true, AskHuman: broken}, "", "confirmed"},
		{"elicitation broken in human mode", policy.Rules{Confirm: policy.ConfirmHuman}, pipeline.Request{Tool: "svc_write", Confirm: true, AskHuman: broken}, toolerr.Denied, "denied"},
		{"deny glob: hidden, answered as unknown", policy.Rules{Deny: []string{"svc_w*"}}, pipeline.Request{Tool: "svc_write", Confirm: true}, toolerr.UnknownTool, "denied"},
		{"allow list: hidden, answered as unknown", policy.Rules{Allow: []string{"svc_write"}}, pipeline.Request{Tool: "svc_read"}, toolerr.UnknownTool, "denied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, fake := newPipeline(t, tc.rules, nil, nil)
			resp := run(context.Background(), &tc.req)
			if (resp.Err == nil) != (tc.code == "") || (resp.Err != nil && resp.Err.Code != tc.code) {
				t.Fatalf("err = %+v, want %q", resp.Err, tc.code)
			}
			if resp.Decision != tc.decision {
				t.Errorf("decision = %q, want %q", resp.Decision, tc.decision)
			}
			if ran := len(fake.Calls()) == 1; ran != (tc.code == "") {
				t.Errorf("backend ran = %v", ran)
			}
		})
	}
}

func yes(context.Context, string) (policy.Approval, error) { return policy.ApprovedOnce, nil }
func no(context.Context, string) (policy.Approval, error)  { return policy.Declined, nil }
func broken(context.Context, string) (policy.Approval, error) {
	return policy.Declined, toolerr.New(toolerr.BackendError, "", "no elicitation")
}

func TestArgumentsMustBeAnObject(t *testing.T) {
	run, _ := newPipeline(t, policy.Rules{}, nil, nil)
	for _, args := range []string{`[1]`, `"x"`, `3`, `{"n":`} {
		resp := run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(args)})
		if resp.Err == nil || resp.Err.Code != toolerr.InvalidArguments {
			t.Errorf("%s: got %+v", args, resp.Err)
		}
	}
	for _, args := range []string{``, `null`, ` {} `} {
		if resp := run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(args)}); resp.Failed() {
			t.Errorf("%q: got %+v", args, resp.Err)
		}
	}
}

func TestBrokenSchemaIsContained(t *testing.T) {
	fake := providertest.New(catalog.ProviderInfo{ID: "bad"},
		providertest.Tool("liar", "schema lies", `{"type":"object","properties":{"a":{"type":"strng"}}}`, true),
		providertest.Tool("remote", "remote ref", `{"$ref":"http://example.com/s.json"}`, true))
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	run := pipeline.New(pipeline.Options{Catalog: reg})
	for _, name := range []string{"bad_liar", "bad_remote"} {
		resp := run(context.Background(), &pipeline.Request{Tool: name, Args: json.RawMessage(`{"a":"x"}`)})
		if resp.Err == nil || resp.Err.Code != toolerr.BackendError || len(fake.Calls()) != 0 {
			t.Fatalf("%s: got %+v", name, resp.Err)
		}
	}
}

// BenchmarkPipelineOverhead measures the full pipeline (resolve, validate,
// policy, loop guard, deadline, shaping, audit to a buffer) around an
// in-memory provider, next to calling that provider directly, so the
// reported ratio is measured side by side in one run.
func BenchmarkPipelineOverhead(b *testing.B) {
	var audit bytes.Buffer
	run, fake := newPipeline(b, policy.Rules{Deny: []string{"*_delete_*"}}, &audit, func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: "ok"}, nil
	})
	tool := catalog.Tool{Name: "read"}
	args := json.RawMessage(`{"token":"abc","n":3}`)
	ctx := context.Background()
	var direct, through time.Duration
	b.Run("direct", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			if _, err := fake.Call(ctx, tool, args); err != nil {
				b.Fatal(err)
			}
		}
		direct = time.Since(start) / time.Duration(b.N)
	})
	b.Run("pipeline", func(b *testing.B) {
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			audit.Reset()
			if resp := run(ctx, &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_read", Args: args}); resp.Failed() {
				b.Fatal(resp.Err)
			}
		}
		through = time.Since(start) / time.Duration(b.N)
		b.ReportMetric(float64(through-direct)/1e3, "overhead-µs/op")
	})
	if direct > 0 {
		b.Logf("pipeline %v/op vs direct %v/op: %.1fx, %v added per call", through, direct, float64(through)/float64(direct), through-direct)
	}
}

// Every audit line carries result_tokens: the o200k_base count of the text
// the model receives (tokens.Count), for a result and for an error alike.
func TestAuditResultTokens(t *testing.T) {
	tokens.Load()
	const text = "The quick brown fox jumps over the lazy dog."
	var audit bytes.Buffer
	fake := providertest.New(catalog.ProviderInfo{ID: "svc"}, providertest.Tool("read", "Read things", schema, true))
	fake.Func = func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: text}, nil
	}
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	run := pipeline.New(pipeline.Options{Catalog: reg, AuditTo: &audit, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	resp := run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(`{}`)})
	if resp.Failed() {
		t.Fatalf("call failed: %+v", resp.Err)
	}
	errResp := run(context.Background(), &pipeline.Request{Tool: "svc_nope", Args: json.RawMessage(`{}`)})
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit = %s", audit.String())
	}
	want := []int{10, 0}
	if n, est := tokens.Count(errResp.Err.JSON()); !est {
		want[1] = n
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		got, ok := rec["result_tokens"].(float64)
		if !ok || int(got) != want[i] || want[i] == 0 {
			t.Errorf("line %d: result_tokens = %v, want %d: %s", i, rec["result_tokens"], want[i], line)
		}
		if _, est := rec["result_tokens_estimated"]; est {
			t.Errorf("line %d estimated: %s", i, line)
		}
	}
}
