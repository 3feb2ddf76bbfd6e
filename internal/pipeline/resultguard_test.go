package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// TestResultGuardStage: Options.ResultGuard runs between Policy and
// Execute (traced as result_guard), reads what Execute returned first, and
// its findings reach the audit record.
func TestResultGuardStage(t *testing.T) {
	fake := providertest.New(catalog.ProviderInfo{ID: "svc"}, providertest.Tool("read", "Read", schema, true))
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	guard := func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
			resp := next(ctx, req)
			resp.Result.Text = "guarded: " + resp.Result.Text
			resp.ResultFindings = []pipeline.ResultFinding{{Rule: "r", Severity: "high", Where: "text", Action: "warned"}}
			return resp
		}
	}
	rec := &recorder{}
	for _, tracer := range []pipeline.Tracer{nil, rec} {
		var audit bytes.Buffer
		run := pipeline.New(pipeline.Options{Catalog: reg, Tracer: tracer, AuditTo: &audit, ResultGuard: guard})
		resp := run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(`{"n":1}`)})
		if resp.Err != nil || !strings.HasPrefix(resp.Result.Text, "guarded: read(") {
			t.Fatalf("%+v", resp)
		}
		if !strings.Contains(audit.String(), `,"result_findings":[{"rule":"r","severity":"high","where":"text","action":"warned"}]}`) {
			t.Fatalf("audit %s", audit.String())
		}
	}
	if got, want := strings.Join(rec.log, " "), ">call >audit >loop_guard >resolve >access >validate >policy >result_guard >execute <execute <result_guard <policy <validate <access <resolve <loop_guard <audit <call"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
