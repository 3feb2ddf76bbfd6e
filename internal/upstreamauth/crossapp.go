package upstreamauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// crossApp is enterprise-managed authorization (SEP-990, "cross-app
// access"): the person's ID token from the enterprise IdP is exchanged at
// the IdP for an ID-JAG (RFC 8693, the go-sdk's oauthex.ExchangeToken),
// which the MCP server's authorization server takes as a JWT bearer grant
// (RFC 7523) from this client, authenticated by client_secret_basic.
type crossApp struct {
	h  *Handler
	mu sync.Mutex
	ts oauth2.TokenSource
}

func newCrossApp(h *Handler) (*crossApp, error) {
	c := h.cfg
	switch {
	case c.ClientID == "":
		return nil, errors.New("cross_app needs clientId")
	case c.IdPIssuer == "" && c.IdPTokenURL == "":
		return nil, errors.New("cross_app needs idpIssuer")
	case c.IdPClientID == "":
		return nil, errors.New("cross_app needs idpClientId")
	case c.IDToken == nil:
		return nil, errors.New("cross_app needs idToken")
	}
	return &crossApp{h: h}, nil
}

func (c *crossApp) TokenSource(context.Context) (oauth2.TokenSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ts, nil
}

func (c *crossApp) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer drain(resp.Body)
	cfg, prov := c.h.cfg, c.h.cfg.Provider
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return &Error{Provider: prov, Step: "discovery", Err: fmt.Errorf("malformed WWW-Authenticate: %v", err)}
	}
	prm, err := discoverPRM(ctx, c.h.hc, cs, req.URL.String())
	if err != nil {
		return &Error{Provider: prov, Step: "discovery", Err: err}
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], c.h.hc)
	if err != nil || asm == nil {
		return &Error{Provider: prov, Step: "discovery", Err: fmt.Errorf("authorization server metadata of %s: %v", prm.AuthorizationServers[0], err)}
	}
	idpToken := cfg.IdPTokenURL
	if idpToken == "" {
		idp, err := auth.GetAuthServerMetadata(ctx, cfg.IdPIssuer, c.h.hc)
		if err != nil || idp == nil {
			return &Error{Provider: prov, Step: "discovery", Err: fmt.Errorf("IdP metadata of %s: %v", cfg.IdPIssuer, err)}
		}
		idpToken = idp.TokenEndpoint
	}
	idToken, err := cfg.IDToken(ctx)
	if err != nil || idToken == "" {
		return &Error{Provider: prov, Step: "login", NeedsLogin: true, Err: fmt.Errorf("no ID token from the IdP: %v", err)}
	}
	registerSecret("upstream id token", idToken)
	scopes := cfg.Scopes
	if len(scopes) == 0 {
		scopes = challengeScopes(cs)
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	idpCreds := &oauthex.ClientCredentials{ClientID: cfg.IdPClientID}
	if cfg.IdPClientSecret != "" {
		idpCreds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.IdPClientSecret}
	}
	jag, err := oauthex.ExchangeToken(ctx, idpToken, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG, Audience: asm.Issuer, Resource: prm.Resource,
		Scope: scopes, SubjectToken: idToken, SubjectTokenType: oauthex.TokenTypeIDToken,
	}, idpCreds, c.h.hc)
	if err != nil {
		return &Error{Provider: prov, Step: "token exchange", Err: err}
	}
	registerSecret("upstream id-jag", jag.AccessToken)
	grant := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: asm.TokenEndpoint,
		Scopes: scopes, AuthStyle: oauth2.AuthStyleInHeader,
		// clientcredentials lets grant_type be replaced: the JWT bearer grant.
		EndpointParams: url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {jag.AccessToken}}}
	tok, err := grant.Token(c.h.clientCtx())
	if err != nil {
		return &Error{Provider: prov, Step: "token", Err: err}
	}
	registerToken(tok)
	c.mu.Lock()
	c.ts = oauth2.StaticTokenSource(tok) // the ID-JAG is single-use: a new one per authorization
	c.mu.Unlock()
	return nil
}
