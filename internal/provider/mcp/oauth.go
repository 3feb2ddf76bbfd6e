package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agent-tools/agent-tools/internal/toolerr"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// AuthFrom builds the OAuth handler of an HTTP upstream with an auth block:
// the one serve uses, with no person to log in (a missing or dead login
// makes the provider needs_login). login and onLogin are for the
// `auth login` command and the conformance client; store nil is the
// user's token store.
//
// Without an auth block, the handler is a plain oauth one (the command
// `agent-tools auth login` works on any HTTP upstream that asks for it).
func AuthFrom(id string, spec *Spec, store upstreamauth.Store, login upstreamauth.LoginFunc, redirectURL string, fresh bool) (*upstreamauth.Handler, error) {
	a, implicit := spec.Auth, spec.Auth == nil
	if implicit {
		a = &Auth{Type: "oauth"}
	}
	if store == nil {
		fs, err := upstreamauth.NewFileStore("")
		if err != nil {
			return nil, err
		}
		store = fs
	}
	c := upstreamauth.Config{
		Provider: id, URL: spec.URL, Type: a.Type,
		ClientID: a.ClientID, ClientSecret: a.ClientSecret, Scopes: a.Scopes,
		ClientMetadataURL: a.ClientMetadataURL, RedirectURL: redirectURL,
		Store: store, Login: login, Implicit: implicit && login == nil,
		IdPIssuer: a.IdPIssuer, IdPClientID: a.IdPClientID, IdPClientSecret: a.IdPClientSecret,
	}
	if tok := a.IDToken; tok != "" {
		c.IDToken = func(context.Context) (string, error) { return tok, nil }
	}
	if a.PrivateKeyFile != "" {
		b, err := os.ReadFile(a.PrivateKeyFile)
		if err != nil {
			return nil, fmt.Errorf("provider %s: auth.privateKeyFile: %w", id, err)
		}
		c.PrivateKey = b
	}
	c.Fresh = fresh
	return upstreamauth.New(c)
}

func hasAuthorizationHeader(h map[string]string) bool {
	for k := range h {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return true
		}
	}
	return false
}

// needsLogin reports whether err is an upstream's demand for a login.
func needsLogin(err error) bool { return errors.Is(err, upstreamauth.ErrNeedsLogin) }

// needsLoginError is the teaching error a model gets from a provider that
// waits for a person's login.
func needsLoginError(id string, err error) error {
	return toolerr.New(toolerr.ProviderNeedsLogin,
		fmt.Sprintf("Tell the user that %q needs a login: they run `%s` (or use the Log in button of the console), then retry.", id, upstreamauth.LoginCommand(id)),
		"provider %q needs a login: %v", id, err)
}

// challengeSeen notes a 401 with WWW-Authenticate from an upstream without
// an auth block: the server wants the MCP authorization flow.
type challengeSeen struct{ seen atomic.Bool }

func (c *challengeSeen) note(resp *http.Response) {
	if c != nil && resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") != "" {
		c.seen.Store(true)
	}
}

// unauthenticated is the needs_login error of an upstream with no auth
// block that asked for one.
func unauthenticated(id string) error {
	return &upstreamauth.Error{Provider: id, Step: "connect", NeedsLogin: true,
		Err: errors.New(`the upstream requires authorization (HTTP 401 with WWW-Authenticate); add "auth: {type: oauth}" to the provider`)}
}

var _ auth.OAuthHandler = (*upstreamauth.Handler)(nil)

// watchLogins restarts the provider when a login for it is stored while
// it waits for one (needs_login): `agent-tools auth login` in another
// terminal, or the console. The new session lists the tools and OnChange
// tells the runtime, which sends list_changed. Token refreshes (which also
// rewrite the store) do not restart a running provider.
func (p *Provider) watchLogins(store upstreamauth.WatchStore) {
	err := store.Watch(p.base, func(id string) {
		if id != p.opts.ID {
			return
		}
		p.mu.Lock()
		waiting := p.state == stateFailed && needsLogin(p.lastErr)
		p.mu.Unlock()
		if waiting {
			p.log.Info("a login was stored; restarting")
			// A failed start is logged by connect and kept as the last error,
			// which doctor shows: nothing is left to do with it here.
			_ = p.Restart(p.base)
		}
	})
	if err != nil {
		p.log.Warn("cannot watch the token store: a new login is used on the next call", "err", err)
	}
}
