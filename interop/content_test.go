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

// TestConformanceContentScenariosThroughTheRuntime runs the official
// conformance suite's content scenarios (tools-call-image, -audio,
// -embedded-resource, -mixed-content) against agent-tools in flat mode in
// front of the go-sdk's conformance server, its tools under their own
// names (prefix ""): every check the suite makes of the server itself
// passes through the runtime. (Progressive mode's call is compared block
// by block above: the suite calls the fixture tools by name.)
func TestConformanceContentScenariosThroughTheRuntime(t *testing.T) {
	requirePeers(t)
	node, suite := conformancePeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	addr := startEverythingServer(ctx, t)
	project := t.TempDir()
	config := fmt.Sprintf("mode: flat\nproviders:\n  - id: ev\n    kind: mcp\n    url: http://%s/\n    prefix: \"\"\n    requireConfirm: false\n", addr)
	if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startHTTP(ctx, t, project)
	for _, scenario := range []string{"tools-call-image", "tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content"} {
		cmd := peerCommand(ctx, interopDir, node, suite, "server", "--url", url, "--scenario", scenario)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("scenario %s through agent-tools: %v\n%s", scenario, err, out)
			continue
		}
		t.Logf("%s: passed", scenario)
	}
}
