package upstreamauth_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/tests/authtest"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

func connect(ctx context.Context, url string, h *upstreamauth.Handler) (*sdk.ClientSession, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	return c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, OAuthHandler: h, DisableStandaloneSSE: true}, nil)
}

func handler(t *testing.T, f *authtest.Server, store upstreamauth.Store, login bool) *upstreamauth.Handler {
	t.Helper()
	c := upstreamauth.Config{Provider: "remote", URL: f.URL + "/mcp", Store: store, RedirectURL: "http://127.0.0.1/callback"}
	if login {
		c.Login = upstreamauth.Headless(http.DefaultClient)
	}
	h, err := upstreamauth.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func listTools(ctx context.Context, t *testing.T, url string, h *upstreamauth.Handler) error {
	t.Helper()
	cs, err := connect(ctx, url, h)
	if err != nil {
		return err
	}
	defer cs.Close()
	_, err = cs.ListTools(ctx, nil)
	return err
}

// TestLoginRefreshRevoke: a login (DCR, PKCE, resource), its tokens
// stored encrypted and reused by a handler that cannot log in (serve),
// a refresh on 401, and after revocation needs_login naming the command.
func TestLoginRefreshRevoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := authtest.New(t)
	store, err := upstreamauth.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := listTools(ctx, t, f.URL+"/mcp", handler(t, f, store, true)); err != nil {
		t.Fatalf("login: %v", err)
	}
	if got := redact.String("code-1-abcdef"); strings.Contains(got, "code-1") { // the fake's first code
		t.Errorf("authorization code not redacted: %s", got)
	}
	e, err := store.Load("remote")
	if err != nil || e == nil || e.Token.RefreshToken == "" {
		t.Fatalf("stored login = %+v, %v", e, err)
	}
	if e.Issuer != f.URL || e.ClientID != "dyn-client" {
		t.Errorf("issuer %q client %q", e.Issuer, e.ClientID)
	}
	for _, r := range f.Resources {
		if r != f.URL+"/mcp" {
			t.Errorf("token request resource = %q", r)
		}
	}

	// serve: no login possible; the stored tokens are used.
	serve := handler(t, f, store, false)
	before := f.AuthRequests.Load()
	if err := listTools(ctx, t, f.URL+"/mcp", serve); err != nil {
		t.Fatalf("with stored tokens: %v", err)
	}
	// The access token dies: one refresh, no new login.
	f.ExpireAccess()
	if err := listTools(ctx, t, f.URL+"/mcp", serve); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if f.AuthRequests.Load() != before {
		t.Error("a refresh should not need an authorization request")
	}
	e2, _ := store.Load("remote")
	if e2.Token.AccessToken == e.Token.AccessToken {
		t.Error("the refreshed token was not stored")
	}
	if !strings.Contains(f.Resources[len(f.Resources)-1], "/mcp") {
		t.Errorf("refresh without resource: %q", f.Resources)
	}
	// Revoked: 401 → refresh fails → needs_login with the command.
	f.RevokeAll()
	err = listTools(ctx, t, f.URL+"/mcp", serve)
	if !errors.Is(err, upstreamauth.ErrNeedsLogin) {
		t.Fatalf("after revocation: %v, want needs login", err)
	}
	if !strings.Contains(err.Error(), "agent-tools auth login remote") {
		t.Errorf("error does not name the command: %v", err)
	}
	// A login made elsewhere (auth login) is picked up without a restart.
	if err := listTools(ctx, t, f.URL+"/mcp", handler(t, f, store, true)); err != nil {
		t.Fatal(err)
	}
	if err := listTools(ctx, t, f.URL+"/mcp", serve); err != nil {
		t.Fatalf("serve did not pick up the new login: %v", err)
	}
	// Every token seen is known to the redactor.
	e3, _ := store.Load("remote")
	if got := redact.String("x " + e3.Token.AccessToken + " " + e3.Token.RefreshToken); strings.Contains(got, "canary") {
		t.Errorf("tokens not redacted: %s", got)
	}
}

// TestBadInput: each broken step gives an error naming the provider and
// the step, and nothing is retried without bound.
func TestBadInput(t *testing.T) {
	other := authtest.New(t)
	cases := []struct {
		name string
		knob func(*authtest.Server)
		step string
	}{
		{"malformed metadata", func(f *authtest.Server) { f.BadMetadata = true }, "discovery"},
		{"token endpoint answers HTML", func(f *authtest.Server) { f.HTMLToken = true }, "token"},
		{"metadata redirects to another host", func(f *authtest.Server) {
			f.RedirectMeta = strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/.well-known/oauth-authorization-server"
		}, "discovery"},
		{"callback with a wrong state", func(f *authtest.Server) { f.WrongState = true }, "callback"},
		{"expired code", func(f *authtest.Server) { f.ExpiredCode = true }, "token"},
		{"401 forever", func(f *authtest.Server) { f.AlwaysDeny = true }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			f := authtest.New(t)
			tc.knob(f)
			h := handler(t, f, &upstreamauth.MemStore{}, true)
			var err error
			for range 5 { // a client retrying: the handler's budget bounds the logins
				err = listTools(ctx, t, f.URL+"/mcp", h)
			}
			if err == nil {
				t.Fatal("no error")
			}
			var ae *upstreamauth.Error
			if !errors.As(err, &ae) || ae.Provider != "remote" {
				t.Fatalf("error %v is not an upstreamauth.Error naming the provider", err)
			}
			t.Logf("%v", err)
			if tc.step != "" && ae.Step != tc.step {
				t.Errorf("step = %q, want %q (%v)", ae.Step, tc.step, err)
			}
			if n := f.AuthRequests.Load(); n > 3 {
				t.Errorf("%d authorization requests: unbounded", n)
			}
			if strings.Contains(err.Error(), "canary") {
				t.Errorf("token in error: %v", err)
			}
		})
	}
}

// TestFileStore: the file and its key are 0600, no token is readable in
// the file, an entry moved under another id or with another key fails.
func TestFileStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := upstreamauth.NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := s.Load("x"); e != nil || err != nil {
		t.Fatalf("empty store: %v %v", e, err)
	}
	tok := &oauth2.Token{AccessToken: "plain-canary-access", RefreshToken: "plain-canary-refresh", Expiry: time.Now().Add(time.Hour)}
	if err := s.Save(&upstreamauth.Entry{Provider: "gh", Resource: "https://x/mcp", ClientSecret: "plain-canary-secret", Token: tok}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"upstream-tokens.json", "upstream-tokens.key"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	raw, _ := os.ReadFile(s.Path())
	if strings.Contains(string(raw), "canary") {
		t.Error("token readable in the store file")
	}
	e, err := s.Load("gh")
	if err != nil || e.Token.AccessToken != tok.AccessToken {
		t.Fatalf("round trip: %+v %v", e, err)
	}
	if st := e.Status(); st.Provider != "gh" || !st.Refresh {
		t.Errorf("status %+v", st)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	// Another key: the entry does not open.
	if err := os.WriteFile(filepath.Join(dir, "upstream-tokens.key"), make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("gh"); err == nil || !strings.Contains(err.Error(), "log in again") {
		t.Errorf("wrong key: %v", err)
	}
	// A damaged file is moved aside (store_test.go): the store reads empty.
	if err := os.WriteFile(s.Path(), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Warn = func(string, ...any) {}
	if e, err := s.Load("gh"); err != nil || e != nil {
		t.Errorf("damaged file: %v %v", e, err)
	}
	if aside, _ := filepath.Glob(s.Path() + ".damaged-*"); len(aside) != 1 {
		t.Errorf("damaged file not moved aside: %v", aside)
	}
}
