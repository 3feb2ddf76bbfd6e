package transport

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPOIDC validates JWTs against a local issuer: discovery, JWKS,
// audience, expiry with clock skew, forged and rotated keys.
func TestHTTPOIDC(t *testing.T) {
	is := newIssuer(t)
	_, srv, logs := start(t, HTTPOptions{
		Tokens: []string{"static-token"},
		OIDC:   OIDCOptions{Issuer: is.srv.URL, Audience: "agent-tools", ClockSkew: 30 * time.Second},
	})
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	valid := is.sign(t, nil)
	tests := []struct {
		name   string
		token  func() string
		status int
		want   string // in WWW-Authenticate
	}{
		{"valid", func() string { return valid }, 200, ""},
		{"audience list", func() string { return is.sign(t, map[string]any{"aud": []string{"other", "agent-tools"}}) }, 200, ""},
		{"expired within skew", func() string { return is.sign(t, map[string]any{"exp": now.Add(-10 * time.Second).Unix()}) }, 200, ""},
		{"expired", func() string { return is.sign(t, map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}) }, 401, "the token has expired"},
		{"no expiry", func() string { return is.sign(t, map[string]any{"exp": nil}) }, 401, ""},
		{"wrong audience", func() string { return is.sign(t, map[string]any{"aud": "someone-else"}) }, 401, `audience does not include \"agent-tools\"`},
		{"wrong issuer", func() string { return is.sign(t, map[string]any{"iss": "https://evil.example"}) }, 401, "was not issued by"},
		{"forged key, known kid", func() string { return signWith(t, forger, is.kid, is.srv.URL, nil) }, 401, "signature does not verify"},
		{"forged key, unknown kid", func() string { return signWith(t, forger, "nope", is.srv.URL, nil) }, 401, "signature does not verify"},
		{"tampered payload", func() string {
			p := strings.Split(valid, ".")
			return p[0] + "." + p[1] + "x." + p[2]
		}, 401, "invalid_token"},
		{"alg none", func() string {
			return "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhbGljZSJ9."
		}, 401, "invalid_token"},
		{"static token still works", func() string { return "static-token" }, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := tt.token()
			resp := post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer " + tok})
			body := readBody(t, resp)
			ch := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != tt.status || !strings.Contains(ch, tt.want) {
				t.Errorf("got %d %q %s, want %d %q", resp.StatusCode, ch, body, tt.status, tt.want)
			}
			if len(tok) > 20 && (strings.Contains(body, tok[len(tok)-20:]) || strings.Contains(ch, tok[len(tok)-20:])) {
				t.Error("token echoed")
			}
		})
	}
	if l := logs.String(); strings.Contains(l, valid[len(valid)-20:]) || !strings.Contains(l, "user=oidc:"+is.srv.URL+"|alice") || !strings.Contains(l, "reason=auth:audience") {
		t.Errorf("logs:\n%s", l)
	}

	// Key rotation: a token signed with a new key verifies once the JWKS
	// publishes it (the verifier re-fetches keys for an unknown kid).
	is.rotate(t, false)
	resp := post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer " + is.sign(t, nil)})
	if readBody(t, resp); resp.StatusCode != 200 {
		t.Errorf("after rotation: %d", resp.StatusCode)
	}
	// The go-sdk client with a JWT.
	cs := connect(t, srv.URL, bearerClient(is.sign(t, map[string]any{"sub": "bob"})), nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "jwt"}})
	if err != nil || res.Content[0].(*sdk.TextContent).Text != "jwt" {
		t.Fatalf("call with JWT: %v %+v", err, res)
	}
}

// TestHTTPOIDCIssuerDown: while discovery fails, JWTs get 503 (not 401:
// the token may be fine) and static tokens still work; once the issuer is
// back, JWTs are accepted.
func TestHTTPOIDCIssuerDown(t *testing.T) {
	is := newIssuer(t)
	is.setDown(true)
	h, srv, _ := start(t, HTTPOptions{Tokens: []string{"static"}, OIDC: OIDCOptions{Issuer: is.srv.URL, Audience: "agent-tools"}})
	if err := h.WarmAuth(context.Background()); err == nil {
		t.Error("WarmAuth succeeded with the issuer down")
	}
	resp := post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer " + is.sign(t, nil)})
	if readBody(t, resp); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("issuer down: %d", resp.StatusCode)
	}
	resp = post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer static"})
	if readBody(t, resp); resp.StatusCode != 200 {
		t.Errorf("static while issuer down: %d", resp.StatusCode)
	}
	is.setDown(false)
	h.auth.oidc.mu.Lock()
	h.auth.oidc.lastTry = time.Time{} // skip the retry back-off
	h.auth.oidc.mu.Unlock()
	resp = post(t, srv.URL, initBody, map[string]string{"Authorization": "Bearer " + is.sign(t, nil)})
	if readBody(t, resp); resp.StatusCode != 200 {
		t.Errorf("issuer back: %d", resp.StatusCode)
	}
}
