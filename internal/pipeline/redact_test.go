package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/agent-tools/agent-tools/internal/policy"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// A backend that echoes a secret (its environment, an Authorization header)
// must not get it to the model or the audit: every result and error text is
// scrubbed once, in the outermost stage.
func TestSecretsScrubbedFromResultsErrorsAndAudit(t *testing.T) {
	const secret = "pipeline-canary-5Hq8"
	redact.Add("PIPE_SECRET", secret)
	fake := providertest.New(catalog.ProviderInfo{ID: "svc"},
		providertest.Tool("leak", "Leaks", `{"type":"object"}`, true))
	fake.Func = func(_ context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		switch string(args) {
		case `{"how":"error"}`:
			return nil, errors.New("dial: Authorization: Bearer " + secret)
		case `{"how":"failed"}`:
			return &provider.Result{IsError: true, Text: "refused " + secret, Details: map[string]any{"stderr_tail": "KEY=" + secret}}, nil
		}
		return &provider.Result{Text: "env KEY=" + secret, Structured: map[string]any{"k": secret}}, nil
	}
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	var audit bytes.Buffer
	run := pipeline.New(pipeline.Options{Catalog: reg, AuditTo: &audit, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	for _, how := range []string{"ok", "error", "failed"} {
		resp := run(context.Background(), &pipeline.Request{Tool: "svc_leak", Caller: policy.Caller{Client: secret}, Args: json.RawMessage(`{"how":"` + how + `"}`)})
		b, _ := json.Marshal(resp.Result)
		var body []byte
		if resp.Err != nil {
			body, _ = json.Marshal(resp.Err.Body())
		}
		all := string(b) + string(body)
		if strings.Contains(all, secret) || !strings.Contains(all, "[redacted: PIPE_SECRET]") {
			t.Errorf("%s: %s", how, all)
		}
	}
	if strings.Contains(audit.String(), secret) || !strings.Contains(audit.String(), "[redacted: PIPE_SECRET]") {
		t.Errorf("audit: %s", audit.String())
	}
}
