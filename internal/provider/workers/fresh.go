package workers

import "github.com/agent-tools/agent-tools/internal/provider"

var _ provider.Fresher = (*Provider)(nil)

// Fresh implements provider.Fresher: a workers provider always has the same
// two tools, so calls need no re-listing.
func (p *Provider) Fresh() bool { return true }
