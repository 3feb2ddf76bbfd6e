package registry_test

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// TestPublishedFieldsAreChanges: a tool whose outputSchema, annotations,
// icons or _meta changed is a change (flat mode publishes them), an equal
// copy is not.
func TestPublishedFieldsAreChanges(t *testing.T) {
	base := providertest.Tool("t", "T.", `{"type":"object"}`, true)
	with := func(f func(*catalog.Tool)) catalog.Tool { c := base; f(&c); return c }
	steps := []struct {
		name    string
		tool    catalog.Tool
		changed bool
	}{
		{"output schema", with(func(c *catalog.Tool) { c.OutputSchema = json.RawMessage(`{"type":"object"}`) }), true},
		{"same again", with(func(c *catalog.Tool) { c.OutputSchema = json.RawMessage(`{"type":"object"}`) }), false},
		{"icons", with(func(c *catalog.Tool) {
			c.OutputSchema = json.RawMessage(`{"type":"object"}`)
			c.Upstream = &catalog.UpstreamTool{Icons: json.RawMessage(`[{"src":"a"}]`)}
		}), true},
		{"annotations", with(func(c *catalog.Tool) {
			c.OutputSchema = json.RawMessage(`{"type":"object"}`)
			c.Upstream = &catalog.UpstreamTool{Icons: json.RawMessage(`[{"src":"a"}]`), Annotations: &sdk.ToolAnnotations{IdempotentHint: true}}
		}), true},
		{"equal copy", with(func(c *catalog.Tool) {
			c.OutputSchema = json.RawMessage(`{"type":"object"}`)
			c.Upstream = &catalog.UpstreamTool{Icons: json.RawMessage(`[{"src":"a"}]`), Annotations: &sdk.ToolAnnotations{IdempotentHint: true}}
		}), false},
		{"meta", with(func(c *catalog.Tool) {
			c.OutputSchema = json.RawMessage(`{"type":"object"}`)
			c.Upstream = &catalog.UpstreamTool{Icons: json.RawMessage(`[{"src":"a"}]`), Annotations: &sdk.ToolAnnotations{IdempotentHint: true}, Meta: json.RawMessage(`{"k":1}`)}
		}), true},
	}
	p := providertest.New(catalog.ProviderInfo{ID: "ev", Kind: "mcp"}, base)
	r := registry.New(nil)
	if err := r.Add(p); err != nil {
		t.Fatal(err)
	}
	r.Refresh(context.Background())
	for _, s := range steps {
		p.SetTools(s.tool)
		if got := r.Refresh(context.Background()); got != s.changed {
			t.Errorf("%s: changed = %v, want %v", s.name, got, s.changed)
		}
	}
}
