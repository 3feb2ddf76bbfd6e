package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/toolerr"
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
	p := New(Options{ID: "gh", URL: ts.URL + "/mcp", CacheDir: t.TempDir(), StartTimeout: 5 * time.Second})
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
	if gets > 0 {
		t.Errorf("the SSE fallback was tried (%d GETs)", gets)
	}
}
