// Package kinds is the list of provider kinds this binary has: importing it
// registers each with the config (which then decodes its entries) and with
// provider.Build. A kind is a package with a provider.Kind value (see
// internal/provider/mcp/kind.go) and one line here; the order is the order
// messages list the kinds in.
package kinds

import (
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/provider/cli"
	"github.com/agent-tools/agent-tools/internal/provider/local"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/provider/openapi"
	"github.com/agent-tools/agent-tools/internal/provider/workers"
)

// All is every kind, in the order messages list them; the runtime's own
// (builtin, local) come from their config sections (config.HostEntries).
var All = []provider.Kind{
	mcp.Kind,
	openapi.Kind,
	cli.Kind,
	workers.Kind,
	builtin.Kind,
	local.Kind,
}

func init() {
	for _, k := range All {
		provider.RegisterKind(k)
	}
}
