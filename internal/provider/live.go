package provider

import (
	"context"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// LiveLister is a provider whose tool list may come from a cache of an
// earlier run until its backend has answered (an upstream MCP server's
// warm start). Pinning needs to know: a cached definition is served only
// as far as it matches its pin, and is never pinned (docs/pins.md).
type LiveLister interface {
	// FromCache reports whether the list Tools returns was read from a
	// cache and not yet confirmed by the backend. Cheap, no I/O.
	FromCache() bool
	// ToolsLive returns the backend's own list, starting it and waiting
	// for it under ctx.
	ToolsLive(ctx context.Context) ([]catalog.Tool, error)
}

// CallCheck is run by a provider right before it forwards a call to its
// backend: tool as the catalog resolved it, live the tool list of the
// session that will serve the call (the list that session's backend said,
// not a cache). A non-nil error refuses the call; the provider returns it.
type CallCheck func(ctx context.Context, tool catalog.Tool, live []catalog.Tool) error

// CallChecker is a provider that runs a CallCheck before every forwarded
// call (the registry installs the pin check).
type CallChecker interface {
	SetCallCheck(CallCheck)
}
