package app

import (
	"context"
	"fmt"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// StartLogin runs a person's login to the HTTP upstream id (the console's
// Log in button): the flow of `agent-tools auth login`, with redirectURL
// as the callback and login showing the authorization URL. The tokens go
// to the store serve uses (Redis with server.redis, else the user's file);
// the provider's store watcher restarts it out of needs_login. It returns
// when the login is done or failed (bounded by ctx).
func (a *App) StartLogin(ctx context.Context, id, redirectURL string, login upstreamauth.LoginFunc) error {
	var pc config.Provider
	var spec *mcp.Spec
	for _, p := range a.Config().Providers {
		if p.ID == id {
			pc = p
			spec, _ = p.Spec.(*mcp.Spec)
		}
	}
	if pc.ID == "" {
		return fmt.Errorf("%w: %q", status.ErrUnknownProvider, id)
	}
	if spec == nil || spec.URL == "" || (spec.Auth != nil && spec.Auth.Type == "client_credentials") {
		return fmt.Errorf("provider %q has no login to make (not an HTTP mcp upstream with a person's OAuth)", id)
	}
	var store upstreamauth.Store
	if a.shared != nil && a.shared.Logins != nil {
		store = a.shared.Logins
	}
	h, err := mcp.AuthFrom(id, spec, store, login, redirectURL, true)
	if err != nil {
		return err
	}
	o := mcp.OptionsFrom(provider.HeaderOf(pc), spec, provider.Deps{Version: "login"})
	o.OAuth, o.MaxRestarts = h, 1
	if d, ok := ctx.Deadline(); ok { // the person's time in the browser counts as start time
		o.StartTimeout, o.ListWait = time.Until(d), time.Until(d)
	}
	p := mcp.New(o)
	defer p.Close()
	if _, err := p.Session(ctx); err != nil {
		return fmt.Errorf("login to %s: %w", id, err)
	}
	return nil
}
