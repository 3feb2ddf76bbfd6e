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
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Profiles and per-identity rules are applied in the policy stage: a tool
// outside the profile or denied for the identity is DENIED, a rule's
// confirm mode replaces the global one, and the audit names the profile.
func TestPolicyAccess(t *testing.T) {
	fake := providertest.New(catalog.ProviderInfo{ID: "svc", RequireConfirm: true},
		providertest.Tool("read", "Read things", schema, true),
		providertest.Tool("write", "Write things", schema, false))
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	access := policy.NewAccess(map[string]policy.View{"ro": {Tools: policy.Rules{Allow: []string{"svc_read"}}}},
		[]policy.IdentityRule{
			{Identities: []string{"token:bad*"}, Rules: policy.Rules{Deny: []string{"svc_*"}}},
			{Identities: []string{"token:human*"}, Rules: policy.Rules{Confirm: policy.ConfirmHuman}},
		})
	var audit bytes.Buffer
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{Confirm: policy.ConfirmAgent}, Access: access, AuditTo: &audit,
		Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	tests := []struct {
		name, identity, profile, tool string
		confirm                       bool
		code                          toolerr.Code // "" = ok
	}{
		{"no rule", "token:good0000", "", "svc_read", false, ""},
		{"no rule, agent confirm", "token:good0000", "", "svc_write", true, ""},
		{"identity denied: hidden, answered as unknown", "token:bad00000", "", "svc_read", false, toolerr.UnknownTool},
		{"profile allows read", "token:good0000", "ro", "svc_read", false, ""},
		{"outside profile: hidden, answered as unknown", "token:good0000", "ro", "svc_write", true, toolerr.UnknownTool},
		{"rule confirm human overrides agent flag", "token:human000", "", "svc_write", true, toolerr.Denied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			audit.Reset()
			resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: tt.identity, Profile: tt.profile}, Tool: tt.tool, Args: json.RawMessage(`{}`), Confirm: tt.confirm})
			switch {
			case tt.code == "" && resp.Failed():
				t.Fatalf("failed: %+v", resp.Err)
			case tt.code != "" && (resp.Err == nil || resp.Err.Code != tt.code):
				t.Fatalf("got %+v, want %s", resp.Err, tt.code)
			}
			if tt.profile != "" && !strings.Contains(audit.String(), `"profile":"`+tt.profile+`"`) {
				t.Fatalf("audit has no profile: %s", audit.String())
			}
		})
	}
}
