package facade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// groupCat is a registry with a progressive.groupAbove of its own.
type groupCat struct {
	*registry.Registry
	above int
}

func (c groupCat) ProgressiveGroupAbove() int { return c.above }

// groupedSession serves ten providers in progressive mode with the given
// threshold (0: the default).
func groupedSession(t *testing.T, above int) (*sdk.ClientSession, *registry.Registry) {
	t.Helper()
	reg := registry.New(nil)
	for i := range 10 {
		id := fmt.Sprintf("p%d", i)
		tools := []catalog.Tool{
			providertest.Tool("list_items", "List the items of service "+id+".", `{"type":"object"}`, true),
			providertest.Tool("delete_item", "Delete an item of service "+id+".", `{"type":"object","properties":{"id":{"type":"string"}}}`, false),
		}
		if i == 7 {
			tools = append(tools, providertest.Tool("city_forecast", "Weather forecast for a city over the next days.", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, true))
		}
		p := providertest.New(catalog.ProviderInfo{ID: id, Description: "Service " + id + ", which keeps items and more. A second sentence that help leaves out."}, tools...)
		p.Func = func(_ context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
			return &provider.Result{Text: "ran " + tool.Name + " " + string(args)}, nil
		}
		if err := reg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	reg.Refresh(context.Background())
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}, Guard: policy.NewLoopGuard()})
	fac := facade.New(groupCat{reg, above}, run, facade.Options{Mode: facade.Progressive, Version: "test"})
	fac.Sync()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, reg
}

func callText(t *testing.T, cs *sdk.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*sdk.TextContent).Text, res.IsError
}

func listNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// TestProgressiveGroupsManyProviders: above the threshold, progressive mode
// lists help, one discover and one call whatever the number of providers;
// help names every provider in one line; discover searches them all (or
// one, ranked exactly as that provider's own discover ranks) and returns
// names call takes. Each provider's own discover and call still answer,
// unlisted.
func TestProgressiveGroupsManyProviders(t *testing.T) {
	cs, reg := groupedSession(t, 0) // ten providers, default threshold
	if got := listNames(t, cs); !slices.Equal(got, []string{"agent_tools_call", "agent_tools_discover", "agent_tools_help"}) {
		t.Fatalf("tools/list = %v", got)
	}
	text, isErr := callText(t, cs, "agent_tools_help", map[string]any{})
	var help struct {
		Providers []string `json:"providers"`
		Next      string   `json:"next"`
	}
	if isErr || json.Unmarshal([]byte(text), &help) != nil || len(help.Providers) != 10 {
		t.Fatalf("help = %s", text)
	}
	if help.Providers[7] != "p7: Service p7, which keeps items and more (3 tools)" || !strings.Contains(help.Next, "agent_tools_discover") {
		t.Errorf("help line %q, next %q", help.Providers[7], help.Next)
	}
	var canonical string
	for _, tl := range reg.Tools("p7") {
		if tl.Name == "city_forecast" {
			canonical = tl.Canonical
		}
	}
	text, _ = callText(t, cs, "agent_tools_discover", map[string]any{"query": "weather forecast for a city"})
	var ranked struct {
		Results []struct{ Name, Provider string } `json:"results"`
		Next    string                            `json:"next"`
	}
	if json.Unmarshal([]byte(text), &ranked) != nil || len(ranked.Results) == 0 || ranked.Results[0].Name != canonical || !strings.Contains(ranked.Next, "agent_tools_call") {
		t.Fatalf("discover = %s (want %s first)", text, canonical)
	}
	text, isErr = callText(t, cs, "agent_tools_call", map[string]any{"toolName": canonical, "arguments": map[string]any{"city": "Oslo"}})
	if isErr || !strings.Contains(text, "ran city_forecast") {
		t.Errorf("call = %s", text)
	}
	// Scoped to one provider: the same ranking as its own discover.
	scoped, _ := callText(t, cs, "agent_tools_discover", map[string]any{"query": "delete an item", "provider": "p3"})
	cs2, _ := groupedSession(t, -1) // never grouped
	own, _ := callText(t, cs2, "agent_tools_p3_discover", map[string]any{"query": "delete an item"})
	var a, b struct {
		Results []struct{ Name string } `json:"results"`
	}
	if err := json.Unmarshal([]byte(scoped), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(own), &b); err != nil {
		t.Fatal(err)
	}
	if len(a.Results) == 0 || len(a.Results) != len(b.Results) {
		t.Fatalf("scoped %s vs own %s", scoped, own)
	}
	for i := range a.Results {
		if a.Results[i].Name != "p3_"+b.Results[i].Name {
			t.Errorf("result %d: %s vs p3's own %s", i, a.Results[i].Name, b.Results[i].Name)
		}
	}
	// Listing needs a provider; a query or a provider is required.
	text, _ = callText(t, cs, "agent_tools_discover", map[string]any{"provider": "p1"})
	if !strings.Contains(text, `"total":2`) || !strings.Contains(text, `"name":"p1_list_items"`) {
		t.Errorf("listing = %s", text)
	}
	if text, isErr = callText(t, cs, "agent_tools_discover", map[string]any{}); !isErr || !strings.Contains(text, "INVALID_ARGUMENTS") {
		t.Errorf("empty discover = %s", text)
	}
	if text, isErr = callText(t, cs, "agent_tools_discover", map[string]any{"query": "x", "provider": "nope"}); !isErr || !strings.Contains(text, "not loaded") {
		t.Errorf("unknown provider = %s", text)
	}
	// A client that calls a provider's own meta-tools by name (seed 000's
	// shapes, or a list read before the providers grew) is still served.
	text, isErr = callText(t, cs, "agent_tools_p7_call", map[string]any{"toolName": "city_forecast", "arguments": map[string]any{"city": "Oslo"}})
	if isErr || !strings.Contains(text, "ran city_forecast") {
		t.Errorf("unlisted per-provider call = %s", text)
	}
	if text, isErr = callText(t, cs, "agent_tools_p7_discover", map[string]any{"query": "forecast"}); isErr || !strings.Contains(text, `"name":"city_forecast"`) {
		t.Errorf("unlisted per-provider discover = %s", text)
	}
	// Never grouped: one discover and one call per provider.
	if got := listNames(t, cs2); len(got) != 21 {
		t.Errorf("ungrouped tools/list has %d tools, want 21", len(got))
	}
	// A threshold above the count keeps the per-provider surface too.
	cs3, _ := groupedSession(t, 10)
	if got := listNames(t, cs3); len(got) != 21 {
		t.Errorf("groupAbove 10 with ten providers: %d tools, want 21", len(got))
	}
}
