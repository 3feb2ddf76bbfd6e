package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Regression: an aggregating upstream's long names were
// dropped at load in every mode. Every tool must reach the registry,
// discover, search and the CLI; only flat mode leaves out names over 64.
func TestEveryAggregatedToolIsReachable(t *testing.T) {
	tools := []datasetTool{
		{Server: "Hacker News MCP Server", Name: "getCommentTree", Description: "Comment tree of a story"},
		{Server: "Context7 MCP", Name: "get-library-docs", Description: "Library documentation"},
		{Server: "A Server With An Unusually Long Descriptive Name", Name: "list_directory_with_sizes", Description: "List a directory with sizes"},
		{Server: "Asset Price MCP Server (asset-price-mcp)", Name: "get_asset_price", Description: "Asset price"},
	}
	// The whole 707-tool catalog takes a minute and a half under -race:
	// it runs when AGENT_TOOLS_DATASETS names the data sets (the bench
	// command measures it too); the sample above has the names that matter.
	if dir := os.Getenv("AGENT_TOOLS_DATASETS"); dir != "" {
		for _, ds := range []string{"livemcpbench", "azure-mcp"} {
			more, err := load(filepath.Join(dir, ds, "tools.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, more...)
		}
	} else {
		t.Log("AGENT_TOOLS_DATASETS not set: only the built-in sample is measured")
	}
	res, err := measure(context.Background(), tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Loaded != res.Upstream || res.Discover != res.Upstream || res.Search != res.Upstream || res.CLICallable != res.Upstream {
		t.Fatalf("tools lost: %+v", res)
	}
	if res.Unreadable != 0 {
		t.Fatalf("%d names were rewritten although every character is accepted by model APIs", res.Unreadable)
	}
	long := 0
	for _, tl := range tools {
		if len("hub_"+aggregated(tl.Server, tl.Name)) > 64 {
			long++
		}
	}
	if res.FlatOffered != res.Upstream-long || long == 0 {
		t.Fatalf("flat offered %d of %d with %d names over 64", res.FlatOffered, res.Upstream, long)
	}
}
