package metrics

import (
	"context"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// A quota's refusal is counted by tool and limit.
func TestQuotaRefusals(t *testing.T) {
	m := New()
	for _, limit := range []string{"rate", "rate", "tokens"} {
		resp := &pipeline.Response{Err: toolerr.New(toolerr.RateLimited, "", "x"), Decision: "refused", Quota: &pipeline.QuotaRefusal{Limit: limit}}
		h := m.Middleware()(func(context.Context, *pipeline.Request) *pipeline.Response { return resp })
		h(context.Background(), &pipeline.Request{Resolved: catalog.Tool{Canonical: "gh_issues", Provider: "gh"}})
	}
	out := scrape(t, m)
	for _, want := range []string{
		`agent_tools_quota_refusals_total{limit="rate",tool="gh_issues"} 2`,
		`agent_tools_quota_refusals_total{limit="tokens",tool="gh_issues"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
}
