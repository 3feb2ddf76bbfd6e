// Package upstreamauth is the client side of MCP authorization for HTTP
// upstreams (spec 2025-11-25, with the 2025-03-26 fallbacks): OAuth 2.1
// authorization code with PKCE for a person's login, client credentials
// (client secret or private_key_jwt) for machines, refresh, and one token
// store. Discovery, registration and the code flow are the go-sdk's own
// (auth.AuthorizationCodeHandler, oauthex); this package adds what a runtime
// needs around them: tokens that survive restarts, a refresh on 401 before
// a new login, a login that only a person starts (serve never opens a
// browser: it reports needs_login), bounded retries, redaction of every
// secret it sees, and errors that name the provider and the step.
package upstreamauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ErrNeedsLogin matches an *Error whose cure is a person's login.
var ErrNeedsLogin = errors.New("needs login")

// Error is a failed authorization step.
type Error struct {
	Provider   string
	Step       string // discovery, registration, authorization, token, refresh, login
	NeedsLogin bool
	Err        error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("provider %s: %s: %v", e.Provider, e.Step, e.Err)
	if e.NeedsLogin {
		msg += "; run: " + LoginCommand(e.Provider)
	}
	return redact.String(msg)
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Is(target error) bool { return target == ErrNeedsLogin && e.NeedsLogin }

// LoginCommand is the command a person runs to log provider in.
func LoginCommand(provider string) string { return "agent-tools auth login " + provider }

// LoginFunc shows authURL to whoever can approve it and returns the
// authorization server's answer at the redirect URL.
type LoginFunc func(ctx context.Context, authURL string) (*auth.AuthorizationResult, error)

// Config is one upstream's authorization.
type Config struct {
	Provider string
	URL      string // the upstream's MCP endpoint: the resource
	Type     string // "oauth" (default) or "client_credentials"

	ClientID     string
	ClientSecret string
	Scopes       []string // requested instead of the discovered ones when set
	// PrivateKey is a PEM private key for private_key_jwt (client_credentials);
	// SigningAlg its JWS algorithm ("" = from the key: RS256, ES256 or EdDSA).
	PrivateKey []byte
	SigningAlg string
	// ClientMetadataURL is the client's Client ID Metadata Document URL
	// (an https URL with a path), used as the client id where the server
	// supports it; "" skips that registration method.
	ClientMetadataURL string
	// Cross-app access (Type "cross_app", SEP-990): the enterprise IdP
	// (issuer, or its token endpoint directly), this client's id there, and
	// where the person's ID token comes from.
	IdPIssuer, IdPTokenURL       string
	IdPClientID, IdPClientSecret string
	IDToken                      func(context.Context) (string, error)
	// RedirectURL is where the authorization server sends the person back
	// (the loopback listener of the login).
	RedirectURL string

	Store      Store        // nil: in memory only
	Log        *slog.Logger // where a failed write of tokens is logged (nil: slog.Default)
	HTTPClient *http.Client // discovery, registration and token requests (nil = default)
	// Login runs the browser part of a login. nil (serve): a missing or dead
	// login is reported as needs_login, never started.
	Login LoginFunc
	// OnLogin is called after new tokens were obtained by a login.
	OnLogin func()
	// Implicit marks a handler the config did not ask for (an HTTP upstream
	// without an auth block): only a 401 that asks for OAuth
	// (WWW-Authenticate) makes it needs_login; another 401 is a failure.
	Implicit bool
	// Fresh ignores a stored login (auth login: a new login replaces it,
	// and the old one stays until the new one is saved).
	Fresh bool
}

// maxAuthorize bounds the authorizations (logins, step-ups) one handler
// runs per minute: a server that answers 401 or 403 forever must not cost
// a person endless logins, nor the AS endless requests.
const maxAuthorize = 3

// Handler is an auth.OAuthHandler for one upstream.
type Handler struct {
	cfg   Config
	store Store
	hc    *http.Client
	disc  *observer
	sdk   auth.OAuthHandler // the flow (authorization code or client credentials)

	mu        sync.Mutex
	ts        oauth2.TokenSource // current tokens (nil: none)
	entry     *Entry             // what is stored for them
	refreshed string             // the access token a 401-refresh produced, not refreshed again
	attempts  []time.Time
	lastErr   *Error // the last failed authorization, repeated while the budget is spent
	saveErr   error  // the last failed write of tokens (SaveError)
}

var _ auth.OAuthHandler = (*Handler)(nil)

// New builds the handler and loads a stored login, if any.
func New(cfg Config) (*Handler, error) {
	h := &Handler{cfg: cfg, store: cfg.Store}
	if h.store == nil {
		h.store = &MemStore{}
	}
	redact.Add("upstream client secret", cfg.ClientSecret)
	redact.Add("upstream IdP client secret", cfg.IdPClientSecret)
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	h.disc = &observer{base: transportOf(base), resource: cfg.URL}
	h.hc = &http.Client{Transport: h.disc, Timeout: base.Timeout, CheckRedirect: sameHostRedirect}
	var err error
	switch cfg.Type {
	case "", "oauth":
		h.sdk, err = h.newCodeHandler()
	case "client_credentials":
		h.sdk, err = newClientCredentials(h)
	case "cross_app":
		h.sdk, err = newCrossApp(h)
	default:
		err = fmt.Errorf("unknown auth type %q", cfg.Type)
	}
	if err != nil {
		return nil, &Error{Provider: cfg.Provider, Step: "configuration", Err: err}
	}
	if !cfg.Fresh {
		if _, err := h.reload(); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// reload adopts the stored login when it differs from the one held (a
// login made by `agent-tools auth login` or the console while serve runs);
// it reports whether it did.
func (h *Handler) reload() (bool, error) {
	e, err := h.store.Load(h.cfg.Provider)
	if err != nil {
		return false, &Error{Provider: h.cfg.Provider, Step: "token store", Err: err}
	}
	if e == nil || e.Token == nil || e.Resource != h.cfg.URL {
		return false, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.entry != nil && h.entry.Token != nil && h.entry.Token.AccessToken == e.Token.AccessToken {
		return false, nil
	}
	h.entry = e
	h.ts = h.persisting(e, e.Token)
	h.refreshed = ""
	return true, nil
}

// TokenSource implements auth.OAuthHandler.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ts == nil {
		return nil, nil
	}
	return h.ts, nil
}

// LoggedIn reports whether tokens are held.
func (h *Handler) LoggedIn() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts != nil
}

// Authorize implements auth.OAuthHandler: called by the transport after a
// 401 or 403. A 401 with a refresh token held is answered by one refresh;
// anything else by the flow, when a person (or a machine credential) can
// run it, else by a needs_login error.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized && h.refreshOn401(ctx) {
		resp.Body.Close()
		return nil
	}
	if resp.StatusCode == http.StatusForbidden && !insufficientScope(resp) {
		resp.Body.Close()
		return nil // not ours: the transport retries once and the answer stands
	}
	if h.cfg.Login == nil && !h.machine() {
		resp.Body.Close()
		if ok, _ := h.reload(); ok {
			return nil // someone logged in meanwhile: retry with those tokens
		}
		if h.cfg.Implicit && resp.Header.Get("WWW-Authenticate") == "" {
			return &Error{Provider: h.cfg.Provider, Step: "connect", Err: fmt.Errorf("the upstream refused the request (HTTP %s) without asking for authorization", resp.Status)}
		}
		why := errors.New("the upstream needs a login (HTTP " + resp.Status + ")")
		if h.LoggedIn() {
			why = errors.New("the login expired or was revoked and could not be refreshed")
		}
		return &Error{Provider: h.cfg.Provider, Step: "authorization", NeedsLogin: true, Err: why}
	}
	if err := h.budget(); err != nil {
		resp.Body.Close()
		return err
	}
	if err := h.sdk.Authorize(ctx, req, resp); err != nil {
		err = h.stepError(err)
		var e *Error
		if errors.As(err, &e) {
			h.mu.Lock()
			h.lastErr = e
			h.mu.Unlock()
		}
		return err
	}
	if h.machine() {
		ts, err := h.sdk.TokenSource(ctx)
		if err != nil || ts == nil {
			return &Error{Provider: h.cfg.Provider, Step: "token", Err: fmt.Errorf("no token: %v", err)}
		}
		h.mu.Lock()
		h.ts = &registering{base: ts}
		h.mu.Unlock()
	}
	if h.cfg.OnLogin != nil {
		h.cfg.OnLogin()
	}
	return nil
}

// machine reports whether the flow runs without a person's browser.
func (h *Handler) machine() bool {
	return h.cfg.Type == "client_credentials" || h.cfg.Type == "cross_app"
}

func insufficientScope(resp *http.Response) bool {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

func (h *Handler) budget() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	keep := h.attempts[:0]
	for _, t := range h.attempts {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	h.attempts = keep
	if len(h.attempts) >= maxAuthorize {
		e := &Error{Provider: h.cfg.Provider, Step: "authorization", NeedsLogin: !h.machine(),
			Err: fmt.Errorf("the upstream refused %d fresh authorizations within a minute; not retrying", maxAuthorize)}
		if l := h.lastErr; l != nil {
			e.Step, e.NeedsLogin = l.Step, l.NeedsLogin
			e.Err = fmt.Errorf("%w (%d attempts within a minute; not retrying before %s)", l.Err, maxAuthorize, h.attempts[0].Add(time.Minute).Format(time.TimeOnly))
		}
		return e
	}
	h.attempts = append(h.attempts, now)
	return nil
}

// LastError is the last failed authorization step (nil: none), as the
// login reports it: transports wrap it in their own words.
func (h *Handler) LastError() *Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastErr
}

// stepError names the step of an error from the go-sdk's flow.
func (h *Handler) stepError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "no configured client registration methods are supported") {
		// Logging in again cannot help: say what to change in the config.
		return &Error{Provider: h.cfg.Provider, Step: "registration", Err: h.noRegistration()}
	}
	step := "authorization"
	switch {
	case strings.Contains(msg, "metadata") || strings.Contains(msg, "WWW-Authenticate"):
		step = "discovery"
	case strings.Contains(msg, "register") || strings.Contains(msg, "registration"):
		step = "registration"
	case strings.Contains(msg, "token"):
		step = "token"
	case strings.Contains(msg, "state") || strings.Contains(msg, "issuer"):
		step = "callback"
	}
	return &Error{Provider: h.cfg.Provider, Step: step, NeedsLogin: !h.machine(), Err: err}
}

// noRegistration explains an authorization server this runtime cannot
// register with: it lacks dynamic client registration (no
// registration_endpoint) and Client ID Metadata Documents are not usable
// (unsupported by it, or no clientMetadataUrl configured), so the client
// must be registered by hand and its id configured.
func (h *Handler) noRegistration() error {
	as := h.disc.issuer()
	if as == "" {
		as = "of " + h.cfg.URL
	}
	cimd := "nor Client ID Metadata Documents (its metadata lacks client_id_metadata_document_supported)"
	switch {
	case h.disc.supportsCIMD() && h.cfg.ClientMetadataURL == "":
		cimd = "and it accepts Client ID Metadata Documents, but none is configured (auth: {clientMetadataUrl: https://…/client.json})"
	case h.cfg.ClientMetadataURL != "":
		cimd = "nor Client ID Metadata Documents (its metadata lacks client_id_metadata_document_supported, so clientMetadataUrl is not usable)"
	}
	return fmt.Errorf("the authorization server %s offers no dynamic client registration (its metadata has no registration_endpoint), %s; "+
		"register a client with it (redirect URL http://127.0.0.1:PORT/callback, fixed with auth.redirectPort) and configure it on provider %q: "+
		"auth: {type: oauth, clientId: <id>, clientSecret: ${SECRET} if one was issued}",
		as, cimd, h.cfg.Provider)
}

// refreshOn401 refreshes the held tokens once per access token; it
// reports whether new tokens are held.
func (h *Handler) refreshOn401(ctx context.Context) bool {
	h.mu.Lock()
	e := h.entry
	if e == nil || e.Token == nil || e.Token.RefreshToken == "" || e.TokenURL == "" {
		h.mu.Unlock()
		return false
	}
	cur, err := h.ts.Token()
	if err != nil || cur.AccessToken == h.refreshed {
		h.mu.Unlock()
		return false // this very token came from a refresh: a new login is due
	}
	h.mu.Unlock()
	old := *e.Token
	old.Expiry = time.Unix(1, 0) // make oauth2 refresh now
	src := h.oauthConfig(e).TokenSource(h.clientCtx(), &old)
	tok, err := src.Token()
	if err != nil { // a dead refresh token is not tried again for this access token
		h.mu.Lock()
		h.refreshed = cur.AccessToken
		h.mu.Unlock()
		return false
	}
	h.mu.Lock()
	h.refreshed = tok.AccessToken
	h.mu.Unlock()
	h.save(e, tok)
	h.mu.Lock()
	h.ts = h.persisting(h.entry, tok)
	h.mu.Unlock()
	return true
}

func (h *Handler) oauthConfig(e *Entry) *oauth2.Config {
	return &oauth2.Config{
		ClientID: e.ClientID, ClientSecret: e.ClientSecret, Scopes: e.Scopes, RedirectURL: e.RedirectURL,
		Endpoint: oauth2.Endpoint{AuthURL: e.AuthURL, TokenURL: e.TokenURL, AuthStyle: oauth2.AuthStyle(e.AuthStyle)},
	}
}

// clientCtx carries the HTTP client to oauth2 for token requests; it is
// not a request's context, as the token source outlives the request.
func (h *Handler) clientCtx() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, h.hc)
}

// persisting is the token source for tok: oauth2's refreshing source
// (refreshes shortly before expiry), saving and registering each new token.
func (h *Handler) persisting(e *Entry, tok *oauth2.Token) oauth2.TokenSource {
	registerToken(tok)
	return &saving{h: h, base: h.oauthConfig(e).TokenSource(h.clientCtx(), tok), last: tok.AccessToken}
}

type saving struct {
	h    *Handler
	base oauth2.TokenSource
	mu   sync.Mutex
	last string
}

func (s *saving) Token() (*oauth2.Token, error) {
	tok, err := s.base.Token()
	if err != nil {
		return nil, &Error{Provider: s.h.cfg.Provider, Step: "refresh", NeedsLogin: true, Err: err}
	}
	s.mu.Lock()
	changed := tok.AccessToken != s.last
	s.last = tok.AccessToken
	s.mu.Unlock()
	if changed {
		registerToken(tok)
		s.h.mu.Lock()
		e := s.h.entry
		s.h.mu.Unlock()
		if e != nil {
			s.h.save(e, tok)
		}
	}
	return tok, nil
}

// save stores tok as e's tokens. A failed write is not fatal to the call
// (the tokens are still held in memory) but it is never silent: it is
// logged as an error, and SaveError reports it (auth login fails with it).
func (h *Handler) save(e *Entry, tok *oauth2.Token) {
	n := *e
	n.Token, n.Updated = tok, time.Now().UTC()
	h.mu.Lock()
	h.entry = &n
	h.mu.Unlock()
	err := h.store.Save(&n)
	h.mu.Lock()
	h.saveErr = err
	h.mu.Unlock()
	if err == nil {
		return
	}
	rotated := e.Token != nil && e.Token.RefreshToken != "" && tok.RefreshToken != "" && tok.RefreshToken != e.Token.RefreshToken
	msg := "upstream login: the new tokens could not be saved; they are used until this process ends, then a new login is needed"
	if rotated {
		msg = "upstream login: the server rotated the refresh token and the new one could not be saved; the stored one is now spent, so a new login is needed once this process ends"
	}
	log := h.cfg.Log
	if log == nil {
		log = slog.Default()
	}
	log.Error(msg, "provider", h.cfg.Provider, "error", err.Error())
}

// SaveError is the error of the last write of tokens to the store (nil
// when it succeeded or none was made).
func (h *Handler) SaveError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.saveErr
}

// newCodeHandler is the go-sdk's authorization code handler, configured
// for this runtime: registration by pre-registered id, Client ID Metadata
// Document or DCR; offline_access when the server lists it; new tokens
// persisted.
func (h *Handler) newCodeHandler() (auth.OAuthHandler, error) {
	c := h.cfg
	redirect := c.RedirectURL
	if redirect == "" {
		redirect = "http://127.0.0.1/callback" // serve never runs the flow; the login sets the real one
	}
	login := c.Login
	if login == nil {
		login = func(context.Context, string) (*auth.AuthorizationResult, error) {
			return nil, &Error{Provider: c.Provider, Step: "login", NeedsLogin: true, Err: errors.New("no person to log in here")}
		}
	}
	ac := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return login(ctx, a.URL)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "agent-tools",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		RequestRefreshToken: true,
		Client:              h.hc,
		NewTokenSource: func(_ context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			return h.loggedIn(oc, tok), nil
		},
	}
	if c.ClientMetadataURL != "" {
		ac.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: c.ClientMetadataURL}
	}
	if c.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: c.ClientID}
		if c.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret}
		}
		ac.PreregisteredClient = pc
		ac.DynamicClientRegistrationConfig = nil // a configured id is the registration
	}
	if len(c.Scopes) > 0 {
		scopes := c.Scopes
		ac.ScopeFilter = func([]string) []string { return scopes }
	}
	return auth.NewAuthorizationCodeHandler(ac)
}

// loggedIn records the tokens of a completed login.
func (h *Handler) loggedIn(oc *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	registerSecrets(&Entry{ClientSecret: oc.ClientSecret})
	e := &Entry{
		Provider: h.cfg.Provider, Resource: h.cfg.URL, Issuer: h.disc.issuer(),
		ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
		AuthURL: oc.Endpoint.AuthURL, TokenURL: oc.Endpoint.TokenURL, AuthStyle: int(oc.Endpoint.AuthStyle),
		RedirectURL: oc.RedirectURL, Scopes: oc.Scopes,
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		e.Scopes = strings.Fields(s)
	}
	h.save(e, tok)
	ts := h.persisting(h.entry, tok)
	h.mu.Lock()
	h.ts, h.refreshed = ts, ""
	h.mu.Unlock()
	return ts
}

// Logout forgets the provider's login.
func Logout(s Store, provider string) error { return s.Delete(provider) }

func registerToken(tok *oauth2.Token) {
	if tok == nil {
		return
	}
	redact.Add("upstream access token", tok.AccessToken)
	redact.Add("upstream refresh token", tok.RefreshToken)
	if id, ok := tok.Extra("id_token").(string); ok {
		redact.Add("upstream id token", id)
	}
}

func registerSecret(name, v string) { redact.Add(name, v) }

func registerSecrets(e *Entry) {
	redact.Add("upstream client secret", e.ClientSecret)
	registerToken(e.Token)
}

// registering registers each token it passes on (client credentials).
type registering struct{ base oauth2.TokenSource }

func (r *registering) Token() (*oauth2.Token, error) {
	t, err := r.base.Token()
	if err == nil {
		registerToken(t)
	}
	return t, err
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// sameHostRedirect refuses a redirect to another host during discovery,
// registration and token requests: metadata and tokens come from the
// server that was asked, or not at all.
func sameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("too many redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		return fmt.Errorf("refused a redirect from %s to another host (%s)", via[0].URL.Host, req.URL.Host)
	}
	return nil
}

// drain is for response bodies read only for their status.
func drain(r io.ReadCloser) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10)); r.Close() }
