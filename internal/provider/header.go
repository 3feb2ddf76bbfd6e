package provider

import (
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
)

// Header is what every provider entry says beside its kind's own keys:
// decoded once by the config, taken from the entry once by Build, and
// embedded by each kind's options rather than copied into them field by
// field. Keys the runtime applies itself (enabled, rename, overrides, pin,
// skills) stay with the entry.
type Header struct {
	ID           string
	Description  string
	DiscoverHint string
	// RequireConfirm false means no tool of this provider needs confirmation.
	RequireConfirm bool
	// Timeout is the default per-call deadline (0: the runtime default).
	Timeout time.Duration
	// ReadOnly names tools (or, for kinds that say so, globs) that never
	// need confirmation.
	ReadOnly []string
}

// HeaderOf is the header of a config entry.
func HeaderOf(pc config.Provider) Header {
	return Header{ID: pc.ID, Description: pc.Description, DiscoverHint: pc.DiscoverHint,
		RequireConfirm: pc.RequireConfirm, Timeout: pc.Timeout.Duration, ReadOnly: pc.ReadOnly}
}

// Info is the catalog's view of a provider of kind with this header.
func (h Header) Info(kind string) catalog.ProviderInfo {
	return catalog.ProviderInfo{ID: h.ID, Kind: kind, Description: h.Description, DiscoverHint: h.DiscoverHint,
		RequireConfirm: h.RequireConfirm, Timeout: h.Timeout}
}
