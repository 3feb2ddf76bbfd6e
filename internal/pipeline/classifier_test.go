package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// byMode is a provider whose "job" tool is read-only in mode "look" only.
type byMode struct{ *providertest.Fake }

func (byMode) ReadOnlyCall(_ catalog.Tool, args json.RawMessage) bool {
	var a struct{ Mode string }
	return json.Unmarshal(args, &a) == nil && a.Mode == "look"
}

var _ provider.CallClassifier = byMode{}

func TestPerCallReadOnlyClassification(t *testing.T) {
	fake := providertest.New(catalog.ProviderInfo{ID: "w", RequireConfirm: true, Timeout: time.Second},
		providertest.Tool("job", "Mode-dependent", `{"type":"object"}`, false),
		catalog.Tool{Name: "always", InputSchema: json.RawMessage(`{"type":"object"}`), AlwaysConfirm: true})
	reg := registry.New(nil)
	if err := reg.Add(byMode{fake}); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	run := pipeline.New(pipeline.Options{Catalog: reg, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}, Rules: policy.Rules{}})
	tests := []struct {
		tool, args string
		code       toolerr.Code
		decision   string
	}{
		{"w_job", `{"mode":"look"}`, "", "allowed"},
		{"w_job", `{"mode":"change"}`, toolerr.ConfirmationRequired, "confirmation_required"},
		{"w_always", `{"mode":"look"}`, toolerr.ConfirmationRequired, "confirmation_required"},
	}
	for _, tt := range tests {
		resp := run(context.Background(), &pipeline.Request{Tool: tt.tool, Args: json.RawMessage(tt.args)})
		if (resp.Err == nil) != (tt.code == "") || (resp.Err != nil && resp.Err.Code != tt.code) || resp.Decision != tt.decision {
			t.Errorf("%s %s: err %+v decision %q", tt.tool, tt.args, resp.Err, resp.Decision)
		}
	}
}
