package app

import (
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/cli"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/provider/workers"
)

// Builder turns one validated config entry into a provider. Construction
// starts nothing: providers with a start phase implement provider.Starter.
type Builder func(pc config.Provider, deps provider.Deps) (provider.Provider, error)

// builders is the table of provider kinds this binary builds: one line per
// kind of the config's kinds table (internal/config/kinds.go). This is the
// one place where concrete provider packages are wired into the runtime;
// TestEveryKindBuilds keeps it complete.
var builders = map[string]Builder{
	"mcp":     mcp.Build,
	"cli":     cli.Build,
	"workers": workers.Build,
}
