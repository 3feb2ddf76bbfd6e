package passthrough_test

import (
	"github.com/agent-tools/agent-tools/internal/passthrough"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
)

// The passthrough finds provider/mcp's upstream methods by type assertion
// (provider.As), and provider/mcp sits below the passthrough, so it cannot
// name the interface itself: this guard, compiled by go vet and go test,
// makes a renamed or re-typed method a compile error instead of a silently
// disabled passthrough.
var (
	_ passthrough.Upstream       = (*mcp.Provider)(nil)
	_ passthrough.PromptUpstream = (*mcp.Provider)(nil)
)
