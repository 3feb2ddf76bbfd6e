package local

import (
	"fmt"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Kind is the repository's scripts as a registered kind: its one entry is
// the local: section (config.HostEntries), built through provider.Build
// like every other provider.
var Kind = provider.Kind{
	Kind: config.Kind{
		Name:    config.LocalKind,
		NewSpec: func() config.Spec { return &config.Local{} },
		Section: "local",
	},
	Build: Build,
}

// Build makes the provider of the local: section: its header (description,
// confirmation, timeout) from the section, the scripts run in the config's
// directory.
func Build(h provider.Header, s config.Spec, deps provider.Deps) (provider.Provider, error) {
	l, ok := s.(*config.Local)
	if !ok {
		return nil, fmt.Errorf("provider %q: not the local: section", ID)
	}
	return New(Options{Dir: l.Dir, ProjectDir: deps.ConfigDir, RequireConfirm: h.RequireConfirm,
		Timeout: h.Timeout, Description: h.Description, Logger: deps.Log}), nil
}
