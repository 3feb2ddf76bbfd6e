package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/console"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/status"
	"github.com/agent-tools/agent-tools/internal/transport"
)

// demo is an in-process provider: one read-only tool with a schema that
// has a required field, an enum, a number and a nested object; one
// mutating tool that counts its runs.
type demo struct{ wiped atomic.Int32 }

func (*demo) Info() catalog.ProviderInfo {
	return catalog.ProviderInfo{ID: "demo", Kind: "test", Description: "Demo tools.", RequireConfirm: true}
}

func (*demo) Tools(context.Context) ([]catalog.Tool, error) {
	return []catalog.Tool{
		{Provider: "demo", Name: "greet", Description: "Greet a person by name.", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","required":["name"],"properties":{` +
				`"name":{"type":"string","description":"who to greet"},` +
				`"tone":{"type":"string","enum":["warm","dry"]},` +
				`"times":{"type":"integer"},` +
				`"extra":{"type":"object","properties":{"a":{"type":"string"}}},` +
				`"tags":{"type":"array","items":{"type":"string"}},` +
				`"stops":{"type":"array","items":{"type":"object","required":["city"],"additionalProperties":false,` +
				`"properties":{"city":{"type":"string"},"nights":{"type":"integer"}}}}},"additionalProperties":false}`)},
		{Provider: "demo", Name: "wipe", Description: "Wipe the demo store.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
	}, nil
}

func (d *demo) Call(_ context.Context, t catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	if t.Name == "wipe" {
		d.wiped.Add(1)
		return &provider.Result{Text: "wiped"}, nil
	}
	var in struct {
		Name  string
		Tags  []string
		Stops []struct {
			City   string
			Nights int
		}
	}
	_ = json.Unmarshal(args, &in)
	text := "hello " + in.Name
	if len(in.Tags) > 0 || len(in.Stops) > 0 { // what the form's lists sent, to check them
		text += fmt.Sprintf(" (tags %s; stops %v)", strings.Join(in.Tags, ","), in.Stops)
	}
	return &provider.Result{Text: text}, nil
}

var _ provider.Provider = (*demo)(nil)

type fixture struct {
	t     *testing.T
	app   *app.App
	con   *console.Console
	srv   *httptest.Server
	demo  *demo
	names map[string]string // demo tool -> canonical, read while it is enabled
	done  chan struct{}     // the console's Done (serve's shutdown)
	win   *metrics.Window   // the Activity charts' window; tests sample it
}

func newFixture(t *testing.T, tokens ...string) *fixture {
	return newFixtureWith(t, "", nil, tokens...)
}

// newFixtureWith adds config lines and an approvals queue (wired as serve does).
func newFixtureWith(t *testing.T, extra string, appr *console.Approvals, tokens ...string) *fixture {
	t.Helper()
	return newFixtureProviders(t, extra, appr, nil, tokens...)
}

// newFixtureProviders is newFixtureWith with more in-process providers
// next to the demo.
func newFixtureProviders(t *testing.T, extra string, appr *console.Approvals, more []provider.Provider, tokens ...string) *fixture {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\n" + extra
	// Metrics and their window, wired as serve wires them.
	m := metrics.New()
	win := metrics.NewWindow(m.Registry(), metrics.WindowOptions{})
	mw := []pipeline.Middleware{m.Middleware()}
	if appr != nil {
		mw = append(mw, appr.Middleware())
	}
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &demo{}
	ctx := context.Background()
	store, err := decisions.Open(filepath.Join(t.TempDir(), "decisions.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, app.Options{ProjectDir: dir, AuditDefault: io.Discard, Providers: append([]provider.Provider{d}, more...), Middleware: mw, Decisions: store,
		Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if appr != nil {
		appr.SetPolicy(func() (bool, time.Duration) {
			return a.Config().Policy.Confirm == "human", a.Config().Policy.ApprovalTimeout.Duration
		})
	}
	done := make(chan struct{})
	con, err := console.New(console.Options{Runtime: a, Approvals: appr, Done: done, Activity: win, Tokens: m.Tokens()})
	if err != nil {
		t.Fatal(err)
	}
	ho := a.HTTPOptions()
	ho.Addr, ho.Console = "127.0.0.1:0", con
	for _, tok := range tokens { // "console:<token>" is a person's console-only token (use: console)
		use := ""
		if rest, ok := strings.CutPrefix(tok, "console:"); ok {
			tok, use = rest, "console"
		}
		ho.Tokens, ho.TokenUses = append(ho.Tokens, tok), append(ho.TokenUses, use)
	}
	h, err := transport.NewHTTP(ho)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	names := map[string]string{}
	for _, tl := range a.Registry().Tools("demo") {
		names[tl.Name] = tl.Canonical
	}
	return &fixture{t: t, app: a, con: con, srv: srv, demo: d, names: names, done: done, win: win}
}

// do sends a request; hdr pairs are header name, value.
func (f *fixture) do(method, path, body string, hdr ...string) *http.Response {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := cl.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { res.Body.Close() })
	return res
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// login follows the one-time link and returns the cookie and the page's CSRF token.
func (f *fixture) login() (cookie, csrf string) {
	f.t.Helper()
	link := f.con.LoginPath()
	if link == "" {
		f.t.Fatal("no login link")
	}
	res := f.do("GET", link, "")
	if res.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("login link: %d", res.StatusCode)
	}
	var ck *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == console.CookieName {
			ck = c
		}
	}
	if ck == nil {
		f.t.Fatal("login set no session cookie")
	}
	cookie = ck.Name + "=" + ck.Value
	page := readAll(f.t, f.do("GET", "/ui/", "", "Cookie", cookie))
	const marker = `<meta name="csrf-token" content="`
	i := strings.Index(page, marker)
	if i < 0 {
		f.t.Fatalf("no csrf meta in the page:\n%s", page)
	}
	rest := page[i+len(marker):]
	return cookie, rest[:strings.IndexByte(rest, '"')]
}

func (f *fixture) canonical(name string) string {
	if c, ok := f.names[name]; ok {
		return c
	}
	f.t.Fatalf("no demo tool %s", name)
	return ""
}

func TestSecurityHeadersAndUnauthenticatedRefusal(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		method, path string
		want         int
	}{
		{"GET", "/ui/", http.StatusUnauthorized},
		{"GET", "/ui/tools", http.StatusUnauthorized},
		{"GET", "/ui/activity", http.StatusUnauthorized},
		{"GET", "/ui/api/providers", http.StatusUnauthorized},
		{"GET", "/ui/api/audit", http.StatusUnauthorized},
		{"PUT", "/ui/api/providers/demo", http.StatusUnauthorized},
		{"POST", "/ui/api/providers/demo/restart", http.StatusUnauthorized},
		{"GET", "/ui/api/activity", http.StatusUnauthorized},
		{"POST", "/ui/api/call", http.StatusUnauthorized},
		{"GET", "/ui/login", http.StatusOK},
		{"GET", "/ui/static/app.js", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			res := f.do(tc.method, tc.path, `{"enabled":false}`)
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
			csp := res.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http") {
				t.Errorf("CSP %q allows inline script or another origin", csp)
			}
		})
	}
	if f.demo.wiped.Load() != 0 {
		t.Fatal("an unauthenticated request ran a call")
	}
	if _, ok := f.app.Registry().Lookup(f.canonical("greet")); !ok {
		t.Fatal("an unauthenticated PUT changed a provider")
	}
	// No inline script anywhere in the pages: the CSP would block it.
	cookie, _ := f.login()
	for _, p := range []string{"/ui/", "/ui/tools?q=greet", "/ui/tools/" + f.canonical("greet"), "/ui/activity"} {
		body := readAll(t, f.do("GET", p, "", "Cookie", cookie))
		if strings.Contains(body, "<script>") || strings.Contains(body, " onclick=") || strings.Contains(body, "<style>") {
			t.Errorf("%s has inline script or style", p)
		}
	}
}

func TestLoginLinkIsOneTimeAndSetsAStrictCookie(t *testing.T) {
	f := newFixture(t)
	link := f.con.LoginPath()
	if !strings.HasPrefix(link, "/ui/login?token=") {
		t.Fatalf("link %q", link)
	}
	if res := f.do("GET", "/ui/login?token=wrong", ""); res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
		t.Fatalf("a wrong token: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	res := f.do("GET", link, "")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/" {
		t.Fatalf("login: %d -> %q", res.StatusCode, res.Header.Get("Location"))
	}
	cks := res.Cookies()
	if len(cks) != 1 {
		t.Fatalf("cookies: %v", cks)
	}
	ck := cks[0]
	if ck.Name != console.CookieName || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/ui" || len(ck.Value) < 32 {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/ui, a long random value", ck)
	}
	if res.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatal("the login link's token could leak in a Referer")
	}
	if again := f.do("GET", link, ""); again.StatusCode != http.StatusUnauthorized {
		t.Fatalf("second use of the link: %d, want 401", again.StatusCode)
	}
	if f.con.LoginPath() != "" {
		t.Fatal("a used link is still offered")
	}
	if res := f.do("GET", "/ui/api/providers", "", "Cookie", ck.Name+"="+ck.Value); res.StatusCode != http.StatusOK {
		t.Fatalf("with the cookie: %d", res.StatusCode)
	}
	if res := f.do("GET", "/ui/api/providers", "", "Cookie", ck.Name+"=forged"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a forged cookie: %d", res.StatusCode)
	}
}

func TestCSRFOnCookieMutations(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login()
	if csrf == "" {
		t.Fatal("empty CSRF token")
	}
	tests := []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusForbidden},
		{"wrong token", "x" + csrf[1:], http.StatusForbidden},
		{"the session's token", csrf, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{"Cookie", cookie, "Content-Type", "application/json"}
			if tc.token != "" {
				hdr = append(hdr, console.CSRFHeader, tc.token)
			}
			res := f.do("POST", "/ui/api/call", `{"tool":"`+f.canonical("wipe")+`","confirm":true}`, hdr...)
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.want, readAll(t, res))
			}
		})
	}
	if n := f.demo.wiped.Load(); n != 1 {
		t.Fatalf("wipe ran %d times, want 1 (only with the CSRF token)", n)
	}
}

func TestOriginAndHostChecksAsForMCP(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login()
	tests := []struct {
		name string
		hdr  []string
		want int
	}{
		{"foreign origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"rebinding host", []string{"Host", "evil.example"}, http.StatusForbidden},
		{"loopback origin", []string{"Origin", f.srv.URL}, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("PUT", f.srv.URL+"/ui/api/providers/demo", strings.NewReader(`{"enabled":true}`))
			req.Header.Set("Cookie", cookie)
			req.Header.Set(console.CSRFHeader, csrf)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				if tc.hdr[i] == "Host" {
					req.Host = tc.hdr[i+1]
				} else {
					req.Header.Set(tc.hdr[i], tc.hdr[i+1])
				}
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}

func TestBearerAuthAndTokenLogin(t *testing.T) {
	const tok = "s3cret-token-for-the-console-test"
	f := newFixture(t, tok)
	if f.con.LoginPath() != "" {
		t.Fatal("with tokens configured there is no anonymous login link")
	}
	if res := f.do("GET", "/ui/api/providers", "", "Authorization", "Bearer wrong"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong bearer: %d", res.StatusCode)
	}
	// A bearer mutation needs no CSRF token.
	res := f.do("PUT", "/ui/api/providers/demo", `{"enabled":false}`, "Authorization", "Bearer "+tok)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("bearer PUT: %d %s", res.StatusCode, readAll(t, res))
	}
	if _, ok := f.app.Registry().Lookup(f.canonical("greet")); ok {
		t.Fatal("demo still lists greet after disable")
	}
	// The login page takes the token once for a cookie.
	form := url.Values{"token": {"wrong"}}.Encode()
	if res := f.do("POST", "/ui/login", form, "Content-Type", "application/x-www-form-urlencoded"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token login: %d", res.StatusCode)
	}
	res = f.do("POST", "/ui/login", url.Values{"token": {tok}}.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("token login: %d %v", res.StatusCode, res.Cookies())
	}
	if body := readAll(t, res); strings.Contains(body, tok) {
		t.Fatal("the token is echoed")
	}
	ck := res.Cookies()[0]
	if res := f.do("GET", "/ui/api/providers", "", "Cookie", ck.Name+"="+ck.Value); res.StatusCode != http.StatusOK {
		t.Fatalf("cookie after token login: %d", res.StatusCode)
	}
}

func TestProvidersToggle(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login()
	hdr := []string{"Cookie", cookie, console.CSRFHeader, csrf}
	tests := []struct {
		id, body string
		want     int
		listed   bool
	}{
		{"demo", `{"enabled":false}`, http.StatusOK, false},
		{"demo", `{"enabled":true}`, http.StatusOK, true},
		{"nope", `{"enabled":true}`, http.StatusNotFound, true},
		{"demo", `{}`, http.StatusBadRequest, true},
		{"demo", `{"enabled":"yes"}`, http.StatusBadRequest, true},
	}
	for _, tc := range tests {
		res := f.do("PUT", "/ui/api/providers/"+tc.id, tc.body, hdr...)
		if res.StatusCode != tc.want {
			t.Fatalf("%s %s: %d, want %d", tc.id, tc.body, res.StatusCode, tc.want)
		}
		if _, ok := f.app.Registry().Lookup(f.canonical("greet")); tc.id == "demo" && tc.want == http.StatusOK && ok != tc.listed {
			t.Fatalf("after %s: greet listed %v", tc.body, ok)
		}
	}
	var st status.Status
	if err := json.NewDecoder(f.do("GET", "/ui/api/providers", "", "Cookie", cookie).Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range st.Providers {
		if p.ID == "demo" {
			found = p.Enabled && p.Tools == 2
		}
	}
	if !found {
		t.Fatalf("providers: %+v", st.Providers)
	}
	page := readAll(t, f.do("GET", "/ui/", "", "Cookie", cookie))
	if !strings.Contains(page, `data-provider="demo"`) || !strings.Contains(page, "state-ready") {
		t.Fatalf("providers page lacks demo:\n%s", page)
	}
}

func TestSearchAndSchema(t *testing.T) {
	f := newFixture(t)
	cookie, _ := f.login()
	var out struct {
		Hits []console.Hit `json:"hits"`
	}
	if err := json.NewDecoder(f.do("GET", "/ui/api/tools?q=greet+a+person", "", "Cookie", cookie).Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Hits) == 0 || out.Hits[0].Name != f.canonical("greet") || out.Hits[0].Score <= 0 {
		t.Fatalf("hits: %+v", out.Hits)
	}
	var tv console.ToolView
	if err := json.NewDecoder(f.do("GET", "/ui/api/tools/"+f.canonical("wipe"), "", "Cookie", cookie).Body).Decode(&tv); err != nil {
		t.Fatal(err)
	}
	if !tv.Mutating || tv.Description == "" {
		t.Fatalf("wipe: %+v", tv)
	}
	if res := f.do("GET", "/ui/api/tools/nope", "", "Cookie", cookie); res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown tool: %d", res.StatusCode)
	}
	page := readAll(t, f.do("GET", "/ui/tools/"+f.canonical("greet"), "", "Cookie", cookie))
	for _, want := range []string{`data-arg="name"`, `<option value="&#34;warm&#34;">warm</option>`, `data-arg="times" data-path="times" data-input="integer"`,
		`data-arg="extra" data-path="extra" data-input="object"`, `id="arg-extra.a"`, `data-path="stops" data-input="array"`, `data-path="stops[].city" data-input="text"`, "required"} {
		if !strings.Contains(page, want) {
			t.Errorf("tool page lacks %s", want)
		}
	}
	search := readAll(t, f.do("GET", "/ui/tools?q=greet", "", "Cookie", cookie))
	if !strings.Contains(search, `class="num score"`) {
		t.Error("search page shows no score")
	}
}

func TestCallThroughThePipeline(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login()
	hdr := []string{"Cookie", cookie, console.CSRFHeader, csrf}
	tests := []struct {
		name, body string
		isError    bool
		text       string
		wiped      int32
	}{
		{"read-only", `{"tool":"` + f.canonical("greet") + `","args":{"name":"Ada"}}`, false, "hello Ada", 0},
		{"invalid args", `{"tool":"` + f.canonical("greet") + `","args":{"tone":"loud"}}`, true, "INVALID_ARGUMENTS", 0},
		{"unknown tool", `{"tool":"nope_nothing"}`, true, "UNKNOWN_TOOL", 0},
		{"mutating, unconfirmed", `{"tool":"` + f.canonical("wipe") + `"}`, true, "CONFIRMATION_REQUIRED", 0},
		{"mutating, confirmed", `{"tool":"` + f.canonical("wipe") + `","confirm":true}`, false, "wiped", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := f.do("POST", "/ui/api/call", tc.body, hdr...)
			var out console.CallResult
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if out.IsError != tc.isError || !strings.Contains(out.Text, tc.text) {
				t.Fatalf("got %+v, want isError %v and %q", out, tc.isError, tc.text)
			}
			if n := f.demo.wiped.Load(); n != tc.wiped {
				t.Fatalf("wipe ran %d times, want %d", n, tc.wiped)
			}
		})
	}
	if res := f.do("POST", "/ui/api/call", `{"tool":1}`, hdr...); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed body: %d", res.StatusCode)
	}
}

func TestAuditTailOverSSE(t *testing.T) {
	f := newFixture(t)
	cookie, csrf := f.login()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/ui/api/audit", nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	rd := bufio.NewReader(res.Body)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("first line %q %v", line, err) // the stream is open: the subscription exists
	}
	f.do("POST", "/ui/api/call", `{"tool":"`+f.canonical("greet")+`","args":{"name":"Tail"}}`, "Cookie", cookie, console.CSRFHeader, csrf)
	for i := 0; i < 50; i++ { // bounded: a few lines per event
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if rest, ok := strings.CutPrefix(line, "data: "); ok {
			var rec map[string]any
			if err := json.Unmarshal([]byte(rest), &rec); err != nil {
				t.Fatalf("audit line %q: %v", rest, err)
			}
			if rec["tool"] == f.canonical("greet") && rec["via"] == "console" {
				if strings.Contains(rest, "Tail") {
					t.Fatal("an argument value reached the audit")
				}
				return
			}
		}
	}
	t.Fatal("the call's audit line never arrived")
}

// Shutdown ends the live audit streams (they would hold the HTTP shutdown).
func TestAuditStreamEndsOnShutdown(t *testing.T) {
	f := newFixture(t)
	cookie, _ := f.login()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/ui/api/audit", nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	if _, err := rd.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	close(f.done)
	if _, err := io.ReadAll(rd); err != nil || ctx.Err() != nil {
		t.Fatalf("the stream did not end on shutdown: %v %v", err, ctx.Err())
	}
}
