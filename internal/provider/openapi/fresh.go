package openapi

import "github.com/agent-tools/agent-tools/internal/provider"

var _ provider.Fresher = (*Provider)(nil)

// Fresh implements provider.Fresher: once the document is loaded the
// operations never change until the configuration does (a reload builds a
// new provider), so calls need no re-listing. While a load holds the lock
// (it can take seconds for a large document) the answer is "not yet".
func (p *Provider) Fresh() bool {
	if !p.mu.TryLock() {
		return false
	}
	defer p.mu.Unlock()
	return p.loaded && p.err == nil
}
