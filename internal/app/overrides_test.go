package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/pipeline"
)

type searchIn struct {
	Repo string `json:"repo"`
	Q    string `json:"q"`
}

// An override's text is what the model sees, its hidden argument is gone
// from the published schema, and its default reaches the upstream (docs/pins.md).
func TestOverrideDefaultReachesTheUpstream(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	sdk.AddTool(up, &sdk.Tool{Name: "search", Description: "Search issues of any repository."},
		func(_ context.Context, _ *sdk.CallToolRequest, in searchIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "repo=" + in.Repo + " q=" + in.Q}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	defer ts.Close()
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\naudit: {path: \"off\"}\nproviders:\n" +
		"  - id: up\n    kind: mcp\n    url: " + ts.URL + "\n    requireConfirm: false\n" +
		"    overrides:\n      search:\n        description: Search the acme/web issues.\n        title: Acme search\n" +
		"        annotations: {readOnlyHint: true}\n        defaults: {repo: acme/web, q: \"state:open\"}\n        hide: [repo]\n" +
		"      gone: {description: x}\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := New(ctx, Options{ProjectDir: dir, AuditDefault: io.Discard, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tl, ok := a.Registry().Lookup("up_search")
	if !ok {
		t.Fatalf("not loaded: %v", a.Registry().Names())
	}
	if tl.Description != "Search the acme/web issues." || tl.Title != "Acme search" || !tl.ReadOnly {
		t.Fatalf("override not applied: %+v", tl)
	}
	if strings.Contains(string(tl.InputSchema), "repo") || !strings.Contains(string(tl.InputSchema), `"q"`) {
		t.Fatalf("published schema: %s", tl.InputSchema)
	}
	// The visible default is published, and q is no longer required: a
	// model may leave it out.
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(tl.InputSchema, &schema); err != nil || schema.Properties["q"]["default"] != "state:open" || slices.Contains(schema.Required, "q") {
		t.Fatalf("visible default not published: %s", tl.InputSchema)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"q":"crash"}`, "repo=acme/web q=crash"},
		{`{}`, "repo=acme/web q=state:open"}, // q is required: its default is merged before validation
	} {
		resp := a.Call(ctx, &pipeline.Request{Tool: "up_search", Args: []byte(tc.args)})
		if resp.Err != nil || resp.Result == nil || !strings.Contains(resp.Result.Text, tc.want) {
			t.Fatalf("%s: err %v result %+v", tc.args, resp.Err, resp.Result)
		}
	}
	// The hidden argument is not the model's to send (the upstream's schema
	// allows no other properties, so validation refuses it).
	if resp := a.Call(ctx, &pipeline.Request{Tool: "up_search", Args: []byte(`{"q":"x","repo":"evil/other"}`)}); resp.Err == nil {
		t.Fatalf("a hidden argument was accepted from the model: %+v", resp.Result)
	}
	warned := false
	for _, d := range a.Diagnostics() {
		if d.Item == "gone" && strings.Contains(d.Reason, "overrides names a tool") {
			warned = true
		}
	}
	if !warned {
		t.Fatalf("no warning for an override of an unknown tool: %+v", a.Diagnostics())
	}
}
