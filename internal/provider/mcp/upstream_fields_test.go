package mcp

import (
	"encoding/json"
	"testing"

	"github.com/agent-tools/agent-tools/internal/provider"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamFieldsReachTheCatalog: what flat mode publishes of an upstream
// tool (the fields docs/providers/mcp.md lists) comes through from a live
// list, the wire capture and the cache alike: outputSchema, title, annotations, icons and _meta.
func TestUpstreamFieldsReachTheCatalog(t *testing.T) {
	raw := []*sdk.Tool{
		{Name: "full", Title: "Full", InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": "object"},
			Annotations: &sdk.ToolAnnotations{IdempotentHint: true}, Icons: []sdk.Icon{{Source: "https://example.test/i.png", MIMEType: "image/png"}},
			Meta: sdk.Meta{"vendor/x": "y"}},
		{Name: "bare", InputSchema: map[string]any{"type": "object"}},
	}
	p := New(Options{Header: provider.Header{ID: "x"}, Command: "x", CacheDir: t.TempDir()})
	defer p.Close()
	check := func(how string, entries []*listedTool) {
		t.Helper()
		tools, _ := p.convert(entries)
		if len(tools) != 2 {
			t.Fatalf("%s: tools = %+v", how, tools)
		}
		full, bare := tools[0], tools[1]
		if bare.Upstream != nil {
			t.Errorf("%s: a tool that says nothing more carries %+v", how, bare.Upstream)
		}
		u := full.Upstream
		if full.Title != "Full" || string(full.OutputSchema) != `{"type":"object"}` || u == nil || u.Annotations == nil || !u.Annotations.IdempotentHint ||
			string(u.Icons) != `[{"src":"https://example.test/i.png","mimeType":"image/png"}]` || string(u.Meta) != `{"vendor/x":"y"}` {
			t.Errorf("%s: full = %+v, upstream %+v", how, full, u)
		}
	}
	live := liveList(raw)
	check("live", live)
	if err := p.cache.save(live, nil, nil); err != nil {
		t.Fatal(err)
	}
	c, err := p.cache.load()
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	check("cached", c.Tools)
	b, err := json.Marshal(&sdk.ListToolsResult{Tools: raw})
	if err != nil {
		t.Fatal(err)
	}
	captured, _, ok := parseToolsList(b)
	if !ok {
		t.Fatal("capture refused the list")
	}
	check("captured", captured)
}
