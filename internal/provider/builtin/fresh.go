package builtin

import "github.com/agent-tools/agent-tools/internal/provider"

var _ provider.Fresher = (*Provider)(nil)

// Fresh is always true: the built-in tools are fixed at construction.
func (p *Provider) Fresh() bool { return true }
