package upstreamauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/client/rs"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

const (
	zClientID = "agent-tools-test"
	zSecret   = "zitadel-client-secret-canary-7f3a"
)

// zitadelOP starts zitadel's OpenID Provider (pkg/op, with its example
// in-memory storage and login page) on 127.0.0.1, with one confidential
// client whose redirect URL is the loopback port given.
func zitadelOP(t *testing.T, redirectPort int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	storage.RegisterClients(storage.WebClient(zClientID, zSecret, fmt.Sprintf("http://127.0.0.1:%d/callback", redirectPort)))
	st := storage.NewStorage(storage.NewUserStore(issuer))
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: exampleop.SetupServer(issuer, st, nil, false)}}
	srv.Start()
	t.Cleanup(srv.Close)
	return issuer
}

// protectedMCP is an MCP server behind the OP: every request's token is
// introspected at the OP, and must be active for this server's audience
// (a token minted for another client is refused).
func protectedMCP(t *testing.T, issuer string) string {
	t.Helper()
	ctx := context.Background()
	resource, err := rs.NewResourceServerClientCredentials(ctx, issuer, zClientID, zSecret)
	if err != nil {
		t.Fatal(err)
	}
	server := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "whoami"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "test-user"}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{Stateless: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{issuer}, "scopes_supported": []string{"openid"}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok {
			in, err := rs.Introspect[*oidc.IntrospectionResponse](r.Context(), resource, tok)
			// The OP answers active only when the introspecting client (this
			// server's identity) is in the token's audience.
			ok = err == nil && in.Active && in.ClientID == zClientID
			if in != nil && len(in.Audience) > 0 && !slices.Contains([]string(in.Audience), zClientID) {
				ok = false
			}
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	srv.Start()
	t.Cleanup(srv.Close)
	return base + "/mcp"
}

// person plays the browser: follows the authorization URL to the OP's
// login page, signs in, and follows the redirects to the loopback callback.
func person(ctx context.Context, authURL string) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		return fmt.Errorf("no login page: ended at %s (HTTP %d)", resp.Request.URL, resp.StatusCode)
	}
	login := resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	host, _, _ := net.SplitHostPort(login.Host)
	resp, err = c.PostForm(login.String(), url.Values{"username": {"test-user@" + host}, "password": {"verysecure"}, "id": {id}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("login: HTTP %d at %s", resp.StatusCode, resp.Request.URL)
	}
	return nil
}

// TestZitadel: login, refresh before expiry, refresh on 401, revocation
// (401 → refresh fails → needs login), through the mcp provider serve
// uses, against a real OpenID Provider; the client secret and every token
// appear in no log line, error, or the token file.
func TestZitadel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lb, err := upstreamauth.NewLoopback(0)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	u, _ := url.Parse(lb.URL)
	port, _ := strconv.Atoi(u.Port())
	issuer := zitadelOP(t, port)
	mcpURL := protectedMCP(t, issuer)
	dir := t.TempDir()
	store, _ := upstreamauth.NewFileStore(dir)
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(redact.Default.Handler(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	spec := &mcp.Spec{URL: mcpURL, Auth: &mcp.Auth{Type: "oauth", ClientID: zClientID, ClientSecret: zSecret}}
	var seen []error
	newProvider := func(login upstreamauth.LoginFunc, redirect string) *mcp.Provider {
		h, err := mcp.AuthFrom("zitadel", spec, store, login, redirect, false)
		if err != nil {
			t.Fatal(err)
		}
		return mcp.New(mcp.Options{Header: provider.Header{ID: "zitadel"}, URL: mcpURL, OAuth: h, Logger: log, CacheDir: t.TempDir(), StartTimeout: 20 * time.Second, MaxRestarts: 1})
	}
	call := func(p *mcp.Provider) error {
		_, err := p.Call(ctx, catalog.Tool{Name: "whoami"}, nil)
		if err != nil {
			seen = append(seen, err)
		}
		return err
	}

	// Login (what `agent-tools auth login` does): the person signs in.
	var browserErr error
	login := func(ctx context.Context, authURL string) (*auth.AuthorizationResult, error) {
		go func() { browserErr = person(ctx, authURL) }()
		return lb.Login(io.Discard, false)(ctx, authURL)
	}
	start := time.Now()
	p := newProvider(login, lb.URL)
	if err := call(p); err != nil {
		t.Fatalf("login and first call: %v (browser: %v)", err, browserErr)
	}
	withLogin := time.Since(start)
	p.Close()
	e, _ := store.Load("zitadel")
	if e == nil || e.Token.RefreshToken == "" || e.Issuer != issuer {
		t.Fatalf("stored login: %+v", e)
	}

	// serve: the stored tokens; the first call's cost without a login.
	start = time.Now()
	serve := newProvider(nil, "")
	defer serve.Close()
	if err := call(serve); err != nil {
		t.Fatalf("with stored tokens: %v", err)
	}
	t.Logf("first call with a login (OP round trips, no person's time): %s; with stored tokens: %s", withLogin, time.Since(start))

	// Expiry: a token past its expiry is refreshed before it is sent.
	e.Token.Expiry = time.Now().Add(-time.Minute)
	if err := store.Save(e); err != nil {
		t.Fatal(err)
	}
	p2 := newProvider(nil, "")
	if err := call(p2); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	p2.Close()
	e2, _ := store.Load("zitadel")
	if e2.Token.AccessToken == e.Token.AccessToken {
		t.Error("an expired token was not refreshed")
	}

	// Revocation at the OP: 401 → one refresh (refused) → needs login.
	form := url.Values{"token": {e2.Token.RefreshToken}, "token_type_hint": {"refresh_token"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, issuer+"/revoke", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(zClientID, zSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %v %v", resp, err)
	}
	resp.Body.Close()
	p3 := newProvider(nil, "")
	defer p3.Close()
	err = call(p3)
	if !strings.Contains(fmt.Sprint(err), "PROVIDER_NEEDS_LOGIN") || !strings.Contains(fmt.Sprint(err), "agent-tools auth login zitadel") {
		t.Fatalf("after revocation: %v, want PROVIDER_NEEDS_LOGIN with the command", err)
	}
	if d := p3.Diagnostics()[0]; d.Status != "needs_login" {
		t.Errorf("doctor: %+v", d)
	}

	// The canaries: the secret and every token, nowhere.
	raw, _ := os.ReadFile(filepath.Join(dir, "upstream-tokens.json"))
	secrets := []string{zSecret, e.Token.AccessToken, e.Token.RefreshToken, e2.Token.AccessToken, e2.Token.RefreshToken}
	logMu.Lock()
	texts := []string{logs.String(), string(raw), fmt.Sprint(seen)}
	logMu.Unlock()
	for _, s := range secrets {
		for i, text := range texts {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("secret %.6s… appears in output %d", s, i)
			}
		}
	}
	if errors.Is(err, upstreamauth.ErrNeedsLogin) {
		t.Log("needs_login is also an upstreamauth.ErrNeedsLogin")
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
