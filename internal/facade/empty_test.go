package facade_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// TestEmptyProviderDoesNotCountTowardsGroupAbove (issue 49, item 1): a
// provider with no tool (the repository's .agents/tools before its first
// script) gets no discover or call in tools/list and does not count
// towards progressive.groupAbove, so four providers and an empty one keep
// their own discover and call. Help still names it, its own tools answer
// by name, and once it has a tool it is listed, and counts.
func TestEmptyProviderDoesNotCountTowardsGroupAbove(t *testing.T) {
	reg := registry.New(nil)
	for i := range 4 {
		id := fmt.Sprintf("p%d", i)
		if err := reg.Add(providertest.New(catalog.ProviderInfo{ID: id, Description: "Service " + id + "."},
			providertest.Tool("list_items", "List the items of "+id+".", "", true))); err != nil {
			t.Fatal(err)
		}
	}
	local := providertest.New(catalog.ProviderInfo{ID: "local", Description: "Scripts of the repository."})
	if err := reg.Add(local); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{}, Guard: policy.NewLoopGuard()})
	fac := facade.New(groupCat{reg, 4}, run, facade.Options{Mode: facade.Progressive, Version: "test"})
	reg.OnChange(fac.Sync)
	fac.Sync()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	want := []string{"agent_tools_help"}
	for i := range 4 {
		want = append(want, fmt.Sprintf("agent_tools_p%d_call", i), fmt.Sprintf("agent_tools_p%d_discover", i))
	}
	slices.Sort(want)
	got := listNames(t, cs)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("four providers and an empty one: tools/list = %v\nwant %v", got, want)
	}
	if text, isErr := callText(t, cs, "agent_tools_help", map[string]any{}); isErr || !strings.Contains(text, `"prefix":"local"`) {
		t.Errorf("help leaves the empty provider out: %s", text)
	}
	if text, isErr := callText(t, cs, "agent_tools_local_discover", map[string]any{}); isErr || !strings.Contains(text, `"total":0`) {
		t.Errorf("the empty provider's discover, called by name: %s", text)
	}

	// Its first tool: five providers with tools, above the threshold.
	local.SetTools(providertest.Tool("deploy", "Deploy the app.", "", false))
	reg.Refresh(context.Background())
	if got := listNames(t, cs); !slices.Equal(got, []string{"agent_tools_call", "agent_tools_discover", "agent_tools_help"}) {
		t.Fatalf("five providers with tools: tools/list = %v", got)
	}
}
