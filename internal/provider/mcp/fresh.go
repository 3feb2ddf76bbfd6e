package mcp

import (
	"sync/atomic"

	"github.com/agent-tools/agent-tools/internal/provider"
)

var _ provider.Fresher = (*Provider)(nil)

// freshFlag is set when Tools hands out the current list and cleared when
// the list changes (setToolsLocked), so Fresh needs no lock.
type freshFlag struct{ atomic.Bool }

// Fresh reports that Tools would return the list it returned last: the
// list only changes through the upstream (a new session or list_changed),
// which clears the flag and calls the OnChange callback. The registry then
// skips re-listing this provider on every call.
func (p *Provider) Fresh() bool { return p.served.Load() }
