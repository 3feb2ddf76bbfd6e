// Package authtest is a fake MCP authorization server in front of a
// protected MCP server, on 127.0.0.1, with knobs for the failures tests
// need (malformed metadata, HTML token answers, wrong state, expired
// codes, a server that 401s forever). Tokens it issues contain "canary",
// so a test can look for them where they must not be.
package authtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeAS is a minimal authorization server and protected MCP server on
// 127.0.0.1, with knobs for the failures the tests need.
// Server is the fake.
type Server struct {
	t   testing.TB
	srv *httptest.Server
	URL string // the origin; the MCP endpoint is URL + "/mcp"

	mu        sync.Mutex
	challenge string            // PKCE code_challenge of the pending code
	codes     map[string]bool   // issued, unused codes
	access    map[string]bool   // valid access tokens
	refresh   map[string]string // refresh token → "" (valid)
	n         int

	// knobs
	BadMetadata   bool   // AS metadata is not JSON
	HTMLToken     bool   // token endpoint answers HTML
	WrongState    bool   // authorize redirects with another state
	ExpiredCode   bool   // token endpoint refuses every code (invalid_grant)
	AlwaysDeny    bool   // the MCP endpoint answers 401 whatever the token
	RedirectMeta  string // AS metadata redirects here
	NoRefresh     bool   // token answers carry no refresh token
	NoRegister    bool   // AS metadata has no registration_endpoint (no DCR)
	Open          bool   // the MCP endpoint never asks for a token
	TokenRequests atomic.Int32
	AuthRequests  atomic.Int32
	Resources     []string // resource parameters seen on token requests
}

// New starts a Server for the test.
func New(t testing.TB) *Server {
	f := &Server{t: t, codes: map[string]bool{}, access: map[string]bool{}, refresh: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": f.URL + "/mcp", "authorization_servers": []string{f.URL}, "scopes_supported": []string{"tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		if f.RedirectMeta != "" {
			http.Redirect(w, r, f.RedirectMeta, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if f.BadMetadata {
			fmt.Fprint(w, `{"issuer": "`+f.URL+`", "authorization_endpoint": [`)
			return
		}
		meta := map[string]any{
			"issuer": f.URL, "authorization_endpoint": f.URL + "/authorize", "token_endpoint": f.URL + "/token",
			"registration_endpoint": f.URL + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported": []string{"tools", "offline_access"},
		}
		if f.NoRegister {
			delete(meta, "registration_endpoint")
		}
		json.NewEncoder(w).Encode(meta)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "dyn-client", "token_endpoint_auth_method": "none", "redirect_uris": []string{"http://127.0.0.1/callback"}})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		f.AuthRequests.Add(1)
		q := r.URL.Query()
		f.mu.Lock()
		f.n++
		code := fmt.Sprintf("code-%d-abcdef", f.n)
		f.codes[code] = true
		f.challenge = q.Get("code_challenge")
		f.mu.Unlock()
		st := q.Get("state")
		if f.WrongState {
			st = "not-the-state"
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+st, http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		f.TokenRequests.Add(1)
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.Resources = append(f.Resources, r.Form.Get("resource"))
		if f.HTMLToken {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Sign in</body></html>")
			return
		}
		bad := func() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
		}
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if f.ExpiredCode || !f.codes[r.Form.Get("code")] || base64.RawURLEncoding.EncodeToString(sum[:]) != f.challenge {
				bad()
				return
			}
			delete(f.codes, r.Form.Get("code"))
		case "refresh_token":
			if _, ok := f.refresh[r.Form.Get("refresh_token")]; !ok {
				bad()
				return
			}
			delete(f.refresh, r.Form.Get("refresh_token"))
		default:
			bad()
			return
		}
		f.n++
		at, rt := fmt.Sprintf("access-%d-canary", f.n), fmt.Sprintf("refresh-%d-canary", f.n)
		f.access[at] = true
		ans := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "scope": "tools"}
		if !f.NoRefresh {
			f.refresh[rt] = ""
			ans["refresh_token"] = rt
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ans)
	})
	server := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "hello"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil, nil
	})
	mcpH := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{Stateless: true})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		ok := f.Open || f.access[tok] && !f.AlwaysDeny
		f.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+f.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mcpH.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	f.srv.Start()
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// RevokeAll invalidates every access and refresh token.
func (f *Server) RevokeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.access, f.refresh = map[string]bool{}, map[string]string{}
}

// ExpireAccess invalidates the access tokens only.
func (f *Server) ExpireAccess() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.access = map[string]bool{}
}
