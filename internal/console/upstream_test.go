package console_test

import (
	"context"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"os"
	"strconv"
	"testing"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// The test binary doubles as an upstream MCP server on stdio: with
// CONSOLETEST_UPSTREAM set, TestMain runs it instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("CONSOLETEST_UPSTREAM") != "" {
		runUpstream()
		os.Exit(0)
	}
	os.Exit(testutil.RunIsolated(m)) // tool-list caches out of the user's
}

type noArgs struct{}

// runUpstream serves one tool, pid, that answers the server's process id
// (a restart shows as a new one).
func runUpstream() {
	s := sdk.NewServer(&sdk.Implementation{Name: "upstream", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "pid", Description: "Answer the upstream's process id.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
		})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
}

// upstreamConfig declares the provider "up": this test binary as a stdio
// MCP upstream, its tools read-only by trust.
func upstreamConfig(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := fmt.Sprintf("{CONSOLETEST_UPSTREAM: \"1\"%s}", coverEnv(t))
	return fmt.Sprintf("providers:\n  - {id: up, kind: mcp, command: %q, env: %s, trustAnnotations: true}\n", exe, env)
}

// coverEnv gives a child built with -cover a place to write (it warns otherwise).
func coverEnv(t *testing.T) string {
	if testing.CoverMode() == "" {
		return ""
	}
	return fmt.Sprintf(", GOCOVERDIR: %q", t.TempDir())
}
