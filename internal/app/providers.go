package app

import (
	"fmt"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// buildProvider constructs a configured provider of the kinds this build has.
func buildProvider(pc config.Provider) (provider.Provider, error) {
	return nil, fmt.Errorf("provider kind %q is not available in this build yet", pc.Kind)
}
