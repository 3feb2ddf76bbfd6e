package builtin

import (
	"fmt"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Kind is the runtime's own tools as a registered kind: its one entry is
// the code: section (config.HostEntries), built through provider.Build
// like every other provider.
var Kind = provider.Kind{
	Kind: config.Kind{
		Name:    config.BuiltinKind,
		NewSpec: func() config.Spec { return &config.Code{} },
		Section: "code",
	},
	Build: Build,
}

// Build makes the built-in provider of the code: section c: its scripts'
// limits, and the runtime's status from deps.
func Build(_ provider.Header, s config.Spec, deps provider.Deps) (provider.Provider, error) {
	c, ok := s.(*config.Code)
	if !ok {
		return nil, fmt.Errorf("provider %q: not the code: section", ID)
	}
	o := CodeOptions{
		AllowMutations: c.AllowMutations, MaxCalls: c.MaxCalls, Concurrency: c.Concurrency,
		Timeout: c.Timeout.Duration, Memory: c.Memory, CPU: c.CPU.Duration,
		MaxConcurrent: c.MaxConcurrent, MaxPerIdentity: c.MaxPerIdentity,
	}
	// One set of slots for the process: a reload's provider takes over the
	// caps while the scripts of the one it replaces still hold theirs.
	slots := jsrun.ServerSlots()
	slots.SetCaps(o.caps())
	return New(Options{Status: deps.Status, Code: o, Slots: slots}), nil
}
