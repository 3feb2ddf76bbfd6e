package cli

import "github.com/agent-tools/agent-tools/internal/provider"

var _ provider.Fresher = (*Provider)(nil)

// Fresh is always true: a cli provider's tools come from its config entry,
// which a reload replaces with a new provider.
func (p *Provider) Fresh() bool { return true }
