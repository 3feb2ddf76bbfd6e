//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTypedContentThroughTheRuntime: the conformance server's content
// tools (image, audio, embedded resource, mixed) answer through agent-tools
// with the very content blocks they answer directly, in flat mode with a
// prefix (the pipeline's path, not the passthrough) and through progressive
// mode's call: an image reaches the model as an image, not as a line of
// text describing it.
func TestTypedContentThroughTheRuntime(t *testing.T) {
	requirePeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	addr := startEverythingServer(ctx, t)

	connect := func(url string) *sdk.ClientSession {
		t.Helper()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "content", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	blocks := func(cs *sdk.ClientSession, name string, args any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.Content)
		return string(b)
	}
	direct := connect("http://" + addr + "/")

	runtime := func(mode string) *sdk.ClientSession {
		project := t.TempDir()
		config := fmt.Sprintf("mode: %s\nproviders:\n  - id: ev\n    kind: mcp\n    url: http://%s/\n    requireConfirm: false\n", mode, addr)
		if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		return connect(startHTTP(ctx, t, project))
	}
	flat, progressive := runtime("flat"), runtime("progressive")
	for _, tool := range []string{"test_image_content", "test_audio_content", "test_embedded_resource", "test_multiple_content_types"} {
		want := blocks(direct, tool, map[string]any{})
		if got := blocks(flat, "ev_"+tool, map[string]any{}); got != want {
			t.Errorf("flat %s:\n got %.300s\nwant %.300s", tool, got, want)
		}
		if got := blocks(progressive, "agent_tools_ev_call", map[string]any{"toolName": tool, "arguments": map[string]any{}}); got != want {
			t.Errorf("progressive %s:\n got %.300s\nwant %.300s", tool, got, want)
		}
	}
}
