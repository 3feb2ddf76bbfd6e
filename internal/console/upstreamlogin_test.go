package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/tests/authtest"
)

func providerState(f *fixture, id string) string {
	for _, p := range f.app.Status().Providers {
		if p.ID == id {
			return p.State
		}
	}
	return ""
}

// TestUpstreamLoginButton: a needs_login provider shows Log in; the POST
// needs the session's CSRF token; the flow runs through the console's
// callback against the fake authorization server, the provider leaves
// needs_login, and no response carries the code or a token.
func TestUpstreamLoginButton(t *testing.T) {
	as := authtest.New(t)
	f := newFixtureWith(t, "providers:\n  - {id: remote, kind: mcp, url: \""+as.URL+"/mcp\", auth: {type: oauth}}\n", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = f.app.Restart(ctx, "remote") // the first start finds no login
	if s := providerState(f, "remote"); s != status.StateNeedsLogin {
		t.Fatalf("state %q, want needs_login", s)
	}
	cookie, csrf := f.login()
	page := readAll(t, f.do("GET", "/ui/", "", "Cookie", cookie))
	if !strings.Contains(page, `class="upstream-login" data-provider="remote"`) {
		t.Fatalf("no Log in button for the needs_login provider:\n%s", page)
	}
	if strings.Contains(page, `class="upstream-login" data-provider="demo"`) {
		t.Fatal("Log in shown for a provider that needs none")
	}

	if res := f.do("POST", "/ui/api/providers/remote/login", "", "Cookie", cookie); res.StatusCode != http.StatusForbidden {
		t.Fatalf("POST without CSRF: %d", res.StatusCode)
	}
	res := f.do("POST", "/ui/api/providers/remote/login", "", "Cookie", cookie, console.CSRFHeader, csrf)
	body := readAll(t, res)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	var got struct{ Redirect string }
	if err := json.Unmarshal([]byte(body), &got); err != nil || !strings.HasPrefix(got.Redirect, as.URL+"/authorize?") {
		t.Fatalf("redirect %q (%v)", got.Redirect, err)
	}
	if !strings.Contains(got.Redirect, "redirect_uri="+strings.ReplaceAll(strings.ReplaceAll(f.srv.URL, ":", "%3A"), "/", "%2F")+"%2Fui%2Foauth%2Fcallback") {
		t.Fatalf("the redirect does not come back to the console: %s", got.Redirect)
	}

	// The operator's browser: the authorization server redirects to the
	// console's callback at once.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ar, err := noFollow.Get(got.Redirect)
	if err != nil {
		t.Fatal(err)
	}
	ar.Body.Close()
	loc := ar.Header.Get("Location")
	if !strings.HasPrefix(loc, f.srv.URL+"/ui/oauth/callback?") {
		t.Fatalf("authorization server sent the browser to %q", loc)
	}
	code := ""
	if i := strings.Index(loc, "code="); i >= 0 {
		code = strings.SplitN(loc[i+5:], "&", 2)[0]
	}
	cb := f.do("GET", strings.TrimPrefix(loc, f.srv.URL), "")
	cbBody := readAll(t, cb)
	if cb.StatusCode != http.StatusOK || !strings.Contains(cbBody, "Logged in") {
		t.Fatalf("callback: %d %s", cb.StatusCode, cbBody)
	}
	if code == "" || strings.Contains(cbBody, code) || strings.Contains(body, "canary") {
		t.Fatalf("a response shows the code or a token (code %q)", code)
	}
	// A replayed callback finds no login waiting.
	if again := f.do("GET", strings.TrimPrefix(loc, f.srv.URL), ""); again.StatusCode != http.StatusBadRequest {
		t.Fatalf("replayed callback: %d", again.StatusCode)
	}

	// The store watcher restarts the provider with the login.
	for providerState(f, "remote") == status.StateNeedsLogin {
		select {
		case <-ctx.Done():
			t.Fatal("the provider stayed needs_login")
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Then its tools join the catalog. Waiting for them also waits for the
	// refresh that pins them, which writes the pins file in the test's
	// directory: ending earlier raced that write with the directory's
	// removal.
	for len(f.app.Registry().Tools("remote")) == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("the provider's tools never joined the catalog (state %q)", providerState(f, "remote"))
		case <-time.After(20 * time.Millisecond):
		}
	}
	api := readAll(t, f.do("GET", "/ui/api/providers", "", "Cookie", cookie))
	if strings.Contains(api, "canary") || strings.Contains(api, code) {
		t.Fatal("the providers API shows a token or the code")
	}
}
