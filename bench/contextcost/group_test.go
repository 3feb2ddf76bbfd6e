package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// TestDefaultModeListBounded: the default mode's tools/list stays under
// 2,000 tokens (o200k_base) at any catalog size: with the default
// threshold, from one provider to two thousand, each with long
// descriptions, ten tools and three skills.
func TestDefaultModeListBounded(t *testing.T) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	desc := strings.Repeat("Manages the records, reports and settings of a large service. ", 4)
	for _, n := range []int{1, 2, 3, 4, 5, 70, 500, 2000} {
		reg := registry.New(nil)
		for i := range n {
			id := fmt.Sprintf("svc%d", i)
			p := providertest.New(catalog.ProviderInfo{ID: id, Description: desc, RequireConfirm: true})
			var tools []catalog.Tool
			for j := range 10 {
				tools = append(tools, providertest.Tool(fmt.Sprintf("tool_number_%d", j), desc, `{"type":"object"}`, false))
			}
			p.SetTools(tools...)
			p.SetSkills(catalog.Skill{Name: "triage_everything"}, catalog.Skill{Name: "weekly_report"}, catalog.Skill{Name: "cleanup"})
			if err := reg.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		reg.Refresh(context.Background())
		fac := facade.New(reg, pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}}), facade.Options{})
		fac.Sync()
		b, err := json.Marshal(map[string]any{"tools": fac.Tools()})
		if err != nil {
			t.Fatal(err)
		}
		tokens := len(enc.Encode(string(b), nil, nil))
		t.Logf("%d providers: tools/list %d tokens (%d bytes)", n, tokens, len(b))
		if tokens > 2000 {
			t.Errorf("%d providers: the default mode's tools/list is %d tokens, over 2,000", n, tokens)
		}
	}
}
