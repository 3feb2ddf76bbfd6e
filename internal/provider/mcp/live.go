package mcp

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Pins hold from the first call (docs/pins.md): the runtime installs a
// check (SetCallCheck) that Call runs right before it forwards a call,
// with the tool list of the session that will serve it: the shared
// session's live list (a warm start's cached list is replaced by the
// upstream's own before any call reaches it), or, for a passthrough
// client's own session, the list that session's upstream gives it.

var (
	_ provider.LiveLister  = (*Provider)(nil)
	_ provider.CallChecker = (*Provider)(nil)
)

// FromCache reports whether the tools come from the disk cache, not yet
// confirmed by the upstream.
func (p *Provider) FromCache() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fromCache
}

// ToolsLive starts the upstream if needed, waits for its list under ctx,
// and returns it.
func (p *Provider) ToolsLive(ctx context.Context) ([]catalog.Tool, error) {
	if _, err := p.session(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.served.Store(true)
	return p.tools, nil
}

// SetCallCheck installs the check Call runs before forwarding.
func (p *Provider) SetCallCheck(c provider.CallCheck) {
	p.mu.Lock()
	p.check = c
	p.mu.Unlock()
}

// checkCall runs the installed check with the list s serves.
func (p *Provider) checkCall(ctx context.Context, s *session, tool catalog.Tool) error {
	p.mu.Lock()
	check, live, shared := p.check, p.tools, s == p.sess
	p.mu.Unlock()
	if check == nil {
		return nil
	}
	if !shared {
		var err error
		if live, err = p.sessionTools(ctx, s); err != nil {
			return err
		}
	}
	return check(ctx, tool, live)
}

// sessionTools is the tool list a passthrough session's upstream gives
// that session, listed on its first call and again after it says the list
// changed.
func (p *Provider) sessionTools(ctx context.Context, s *session) ([]catalog.Tool, error) {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	if s.tools != nil && !s.toolsStale.Load() {
		return s.tools, nil
	}
	s.toolsStale.Store(false)
	entries, err := p.listTools(ctx, s)
	if err != nil {
		return nil, p.callError(ctx, s, catalog.Tool{Name: "tools/list"}, err)
	}
	tools, _ := p.convert(entries)
	if tools == nil {
		tools = []catalog.Tool{}
	}
	s.tools = tools
	return tools, nil
}

// sessionList is what a session keeps of its own tool list (passthrough
// sessions only).
type sessionList struct {
	listMu     sync.Mutex
	tools      []catalog.Tool
	toolsStale atomicBool
}

// staleOnListChanged marks a passthrough session's own list stale when its
// upstream says the tools changed (the notification is still relayed).
func (s *session) staleOnListChanged(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "notifications/tools/list_changed" {
			s.toolsStale.Store(true)
		}
		return next(ctx, method, req)
	}
}
