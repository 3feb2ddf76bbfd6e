package upstreamauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clientCreds is the client credentials grant (SEP-1046) with a client
// secret (client_secret_basic or _post, as the server lists) or a signed
// assertion (private_key_jwt, RFC 7523). The go-sdk's extauth handler has
// no private_key_jwt, so discovery is done here with the go-sdk's oauthex
// and auth metadata functions, and the grant with x/oauth2's clientcredentials.
type clientCreds struct {
	h      *Handler
	key    crypto.Signer
	alg    jose.SignatureAlgorithm
	mu     sync.Mutex
	ts     oauth2.TokenSource
	scopes []string
}

func newClientCredentials(h *Handler) (*clientCreds, error) {
	c := &clientCreds{h: h}
	if h.cfg.ClientID == "" {
		return nil, errors.New("client_credentials needs clientId")
	}
	if len(h.cfg.PrivateKey) > 0 {
		k, alg, err := parseKey(h.cfg.PrivateKey, h.cfg.SigningAlg)
		if err != nil {
			return nil, fmt.Errorf("privateKeyFile: %w", err)
		}
		c.key, c.alg = k, alg
	} else if h.cfg.ClientSecret == "" {
		return nil, errors.New("client_credentials needs clientSecret or privateKeyFile")
	}
	return c, nil
}

func parseKey(pemData []byte, alg string) (crypto.Signer, jose.SignatureAlgorithm, error) {
	blk, _ := pem.Decode(pemData)
	if blk == nil {
		return nil, "", errors.New("not a PEM key")
	}
	var k any
	var err error
	switch blk.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, "", err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, "", errors.New("not a signing key")
	}
	if alg != "" {
		return s, jose.SignatureAlgorithm(alg), nil
	}
	switch kk := s.(type) {
	case *rsa.PrivateKey:
		return s, jose.RS256, nil
	case *ecdsa.PrivateKey:
		switch kk.Curve.Params().BitSize {
		case 384:
			return s, jose.ES384, nil
		case 521:
			return s, jose.ES512, nil
		}
		return s, jose.ES256, nil
	case ed25519.PrivateKey:
		return s, jose.EdDSA, nil
	}
	return nil, "", errors.New("unsupported key type")
}

func (c *clientCreds) TokenSource(context.Context) (oauth2.TokenSource, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ts, nil
}

func (c *clientCreds) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer drain(resp.Body)
	prov := c.h.cfg.Provider
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return &Error{Provider: prov, Step: "discovery", Err: fmt.Errorf("malformed WWW-Authenticate: %v", err)}
	}
	prm, err := discoverPRM(ctx, c.h.hc, cs, req.URL.String())
	if err != nil {
		return &Error{Provider: prov, Step: "discovery", Err: err}
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], c.h.hc)
	if err != nil {
		return &Error{Provider: prov, Step: "discovery", Err: fmt.Errorf("authorization server metadata: %v", err)}
	}
	if asm == nil { // 2025-03-26: the server's root is the authorization server
		asm = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimRight(prm.AuthorizationServers[0], "/") + "/token"}
	}
	scopes := c.h.cfg.Scopes
	if len(scopes) == 0 {
		scopes = challengeScopes(cs)
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	c.mu.Lock()
	c.scopes = unionScopes(c.scopes, scopes)
	scopes = c.scopes
	c.mu.Unlock()
	src := &ccSource{c: c, issuer: asm.Issuer, tokenURL: asm.TokenEndpoint, resource: prm.Resource, scopes: scopes,
		style: styleFor(asm.TokenEndpointAuthMethodsSupported)}
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return &Error{Provider: prov, Step: "token", Err: err}
	}
	c.mu.Lock()
	c.ts = ts
	c.mu.Unlock()
	return nil
}

// ccSource requests a token; with a key, each request carries a fresh
// assertion (a JWT is single-use: jti, short expiry).
type ccSource struct {
	c                          *clientCreds
	issuer, tokenURL, resource string
	scopes                     []string
	style                      oauth2.AuthStyle
}

func (s *ccSource) Token() (*oauth2.Token, error) {
	c := s.c
	cfg := clientcredentials.Config{ClientID: c.h.cfg.ClientID, TokenURL: s.tokenURL, Scopes: s.scopes,
		EndpointParams: url.Values{}, AuthStyle: s.style}
	if s.resource != "" {
		cfg.EndpointParams.Set("resource", s.resource)
	}
	if c.key != nil {
		a, err := c.assertion(s.issuer)
		if err != nil {
			return nil, err
		}
		cfg.AuthStyle = oauth2.AuthStyleInParams
		cfg.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		cfg.EndpointParams.Set("client_assertion", a)
	} else {
		cfg.ClientSecret = c.h.cfg.ClientSecret
	}
	tok, err := cfg.Token(c.h.clientCtx())
	if err == nil {
		registerToken(tok)
	}
	return tok, err
}

// assertion is a private_key_jwt client assertion for the issuer.
func (c *clientCreds) assertion(aud string) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: c.alg, Key: c.key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	now := time.Now()
	id := rand.Text()
	cl := jwt.Claims{Issuer: c.h.cfg.ClientID, Subject: c.h.cfg.ClientID, Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(2 * time.Minute)), ID: id}
	return jwt.Signed(signer).Claims(cl).Serialize()
}

func styleFor(methods []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// discoverPRM finds the Protected Resource Metadata (RFC 9728) where the
// MCP spec says, in its order: the WWW-Authenticate resource_metadata URL,
// then the path-based well-known URL, then the root one; none found means
// the 2025-03-26 layout (the server's origin is the authorization server).
func discoverPRM(ctx context.Context, hc *http.Client, cs []oauthex.Challenge, resource string) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	type try struct{ meta, res string }
	var tries []try
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" {
			tries = append(tries, try{u, resource})
			break
		}
	}
	pu := *ru
	pu.RawQuery, pu.Fragment = "", ""
	pu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	tries = append(tries, try{pu.String(), resource})
	root := *ru
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	pu.Path = "/.well-known/oauth-protected-resource"
	tries = append(tries, try{pu.String(), root.String()})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t.meta, t.res, hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("protected resource metadata at %s names no authorization server", t.meta)
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: resource}, nil
}
