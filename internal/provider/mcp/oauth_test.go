package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/tests/authtest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
	"github.com/agent-tools/agent-tools/internal/upstreamauth"
)

// TestNeedsLogin: an HTTP upstream without an auth block that answers 401
// with WWW-Authenticate is needs_login, not failed, with the command to
// run, in doctor and in the model's error; the legacy SSE transport is not
// tried for it.
func TestNeedsLogin(t *testing.T) {
	var gets int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets++ // the SSE fallback would GET
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer ts.Close()
	p := New(Options{Header: provider.Header{ID: "gh"}, URL: ts.URL + "/mcp", CacheDir: t.TempDir(), StartTimeout: 5 * time.Second})
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := p.Call(ctx, catalog.Tool{Name: "x"}, nil)
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != toolerr.ProviderNeedsLogin {
		t.Fatalf("call error = %v, want PROVIDER_NEEDS_LOGIN", err)
	}
	if !strings.Contains(te.Hint, "agent-tools auth login gh") {
		t.Errorf("hint %q does not name the command", te.Hint)
	}
	d := p.Diagnostics()[0]
	if d.Status != "needs_login" || !strings.Contains(d.Reason, "agent-tools auth login gh") {
		t.Errorf("doctor line = %+v", d)
	}
	if lc := p.Lifecycle(); !lc.NeedsLogin || !lc.Failed {
		t.Errorf("lifecycle = %+v, want needs login", lc)
	}
	if gets > 0 {
		t.Errorf("the SSE fallback was tried (%d GETs)", gets)
	}
}

// TestLoginPickedUp: a provider built as serve builds it is needs_login
// until a login is stored by another process (auth login); then it
// restarts at once, lists its tools and tells the runtime (list_changed).
func TestLoginPickedUp(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	f := authtest.New(t)
	pp, err := Build(provider.Header{ID: "remote"}, &Spec{URL: f.URL + "/mcp"}, provider.Deps{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provider)
	defer p.Close()
	p.opts.MinBackoff, p.opts.MaxBackoff = time.Hour, time.Hour // no automatic restart: only the store's news can start it
	changed := make(chan struct{}, 4)
	p.Bind(nil, func() { changed <- struct{}{} })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := p.Call(ctx, catalog.Tool{Name: "hello"}, nil); !strings.Contains(fmt.Sprint(err), "PROVIDER_NEEDS_LOGIN") {
		t.Fatalf("before login: %v", err)
	}
	// auth login, in "another process": its own handler and store.
	store, _ := upstreamauth.NewFileStore(filepath.Join(state, "agent-tools"))
	h, err := AuthFrom("remote", &Spec{URL: f.URL + "/mcp"}, store, upstreamauth.Headless(http.DefaultClient), "http://127.0.0.1/callback", true)
	if err != nil {
		t.Fatal(err)
	}
	login := New(Options{Header: provider.Header{ID: "remote"}, URL: f.URL + "/mcp", OAuth: h, CacheDir: t.TempDir()})
	if _, err := login.Session(ctx); err != nil {
		t.Fatalf("login: %v", err)
	}
	login.Close()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("the stored login was not picked up: %+v", p.Diagnostics()[0])
	}
	if d := p.Diagnostics()[0]; d.Status != "ok" {
		t.Errorf("after login: %+v", d)
	}
	if _, err := p.Call(ctx, catalog.Tool{Name: "hello"}, nil); err != nil {
		t.Errorf("call after login: %v", err)
	}
}

// TestPlain401: an upstream without an auth block whose 401 does not ask
// for OAuth (no WWW-Authenticate) is failed, not needs_login.
func TestPlain401(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer ts.Close()
	pp, err := Build(provider.Header{ID: "plain"}, &Spec{URL: ts.URL + "/mcp"}, provider.Deps{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p := pp.(*Provider)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.Call(ctx, catalog.Tool{Name: "x"}, nil)
	if strings.Contains(fmt.Sprint(err), "NEEDS_LOGIN") || p.Diagnostics()[0].Status != "failed" {
		t.Errorf("plain 401: %v, %+v", err, p.Diagnostics()[0])
	}
}
