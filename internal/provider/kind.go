package provider

import (
	"fmt"
	"sync"

	"github.com/agent-tools/agent-tools/internal/config"
)

// Kind is one provider kind, defined once in its own package: the config
// half (its spec type and how entries of it validate, resolve and print)
// and Build, which turns a validated entry into a Provider. The list of
// kinds (internal/provider/kinds) registers every kind this binary has.
type Kind struct {
	config.Kind
	// Build turns one validated config entry, its header and its kind's
	// spec, into a provider. Construction starts nothing: providers with a
	// start phase implement Starter.
	Build func(h Header, spec config.Spec, deps Deps) (Provider, error)
}

var (
	kindsMu  sync.RWMutex
	builders = map[string]func(Header, config.Spec, Deps) (Provider, error){}
)

// RegisterKind makes a kind known to the config, which then decodes and
// validates its entries, and to Build. It panics when the kind is
// incomplete or registered twice.
func RegisterKind(k Kind) {
	if k.Build == nil {
		panic(fmt.Sprintf("provider: kind %q has no Build", k.Name))
	}
	config.RegisterKind(k.Kind)
	kindsMu.Lock()
	defer kindsMu.Unlock()
	builders[k.Name] = k.Build
}

// Build constructs the provider of a config entry with its kind's builder:
// the one entry point for every kind, the runtime's own (builtin, local:
// config.HostEntries) and those of providers: alike.
func Build(pc config.Provider, deps Deps) (Provider, error) {
	kindsMu.RLock()
	build, ok := builders[pc.Kind]
	kindsMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("provider kind %q cannot be built by this binary", pc.Kind)
	}
	return build(HeaderOf(pc), pc.Spec, deps)
}
