package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
	"github.com/agent-tools/agent-tools/internal/transport"
)

// bearer adds a token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

const (
	opsToken    = "ops-token-0123456789"
	devToken    = "dev-token-0123456789"
	profileYAML = `mode: flat
server:
  http:
    tokens:
      - {name: ops, token: ops-token-0123456789}
      - {name: dev, token: dev-token-0123456789}
    oidc: {issuer: "ISSUER", audience: agent-tools}
profiles:
  ops:
    tools: {allow: ["deploy"]}
    mode: flat
policy:
  rules:
    - identities: ["token:dev"]
      deny: ["deploy"]
    - claims: {groups: [interns]}
      deny: ["deploy"]
`
)

func profileProject(t *testing.T) *project { return profileProjectWith(t, "http://127.0.0.1:1") }

// profileProjectWith is profileProject trusting an OpenID Connect issuer.
func profileProjectWith(t *testing.T, issuer string) *project {
	p := newProject(t)
	p.script(t, "hello", "#!/bin/sh\n# @description Say hello.\n# @readonly\necho hello\n")
	p.script(t, "deploy", "#!/bin/sh\n# @description Deploy.\n# @readonly\necho deployed\n")
	p.file(t, "agent-tools.yaml", strings.Replace(profileYAML, "ISSUER", issuer, 1))
	return p
}

func listNames(t *testing.T, ctx context.Context, url, tok string) ([]string, *sdk.ClientSession) {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(tok)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, cs
}

// Two HTTP clients with different named tokens get different tool lists
// from one runtime, and so do two OIDC callers whose tokens' groups claims
// differ (a rule on claims); /mcp/p/ops serves the ops profile's view, with its profile in
// the audit and the metrics; an unknown profile is a 404 listing them.
func TestHTTPProfilesAndIdentityRules(t *testing.T) {
	is := newTestIssuer(t)
	p := profileProjectWith(t, is.srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var audit testutil.SyncBuffer
	m := metrics.New()
	a, err := app.New(ctx, app.Options{ProjectDir: p.dir, AuditDefault: &audit, Middleware: []pipeline.Middleware{m.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	o := a.HTTPOptions()
	o.Metrics = m
	h, err := transport.NewHTTP(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the sessions' cleanups (LIFO)

	ops, _ := listNames(t, ctx, srv.URL+transport.MCPPath, opsToken)
	dev, devSession := listNames(t, ctx, srv.URL+transport.MCPPath, devToken)
	if !slices.Contains(ops, "deploy") || slices.Contains(dev, "deploy") || !slices.Contains(dev, "hello") {
		t.Fatalf("ops token lists %v, dev token lists %v", ops, dev)
	}
	admin, _ := listNames(t, ctx, srv.URL+transport.MCPPath, is.sign(t, "ann", []string{"admins", "staff"}))
	intern, internSession := listNames(t, ctx, srv.URL+transport.MCPPath, is.sign(t, "ian", []string{"staff", "interns"}))
	if !slices.Contains(admin, "deploy") || slices.Contains(intern, "deploy") || !slices.Contains(intern, "hello") {
		t.Fatalf("admins list %v, interns list %v", admin, intern)
	}
	if res, err := internSession.CallTool(ctx, &sdk.CallToolParams{Name: "deploy"}); err != nil || !res.IsError {
		t.Fatalf("an intern called deploy: %v %+v", err, res)
	}
	res, err := devSession.CallTool(ctx, &sdk.CallToolParams{Name: "deploy"})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "UNKNOWN_TOOL") {
		t.Fatalf("dev calling deploy: %v %+v", err, res)
	}

	prof, profSession := listNames(t, ctx, srv.URL+transport.ProfilePath+"ops", opsToken)
	if !slices.Equal(prof, []string{"deploy"}) {
		t.Fatalf("/mcp/p/ops lists %v", prof)
	}
	if res, err := profSession.CallTool(ctx, &sdk.CallToolParams{Name: "deploy"}); err != nil || res.IsError {
		t.Fatalf("ops calling deploy: %v %+v", err, res)
	}
	if res, err := profSession.CallTool(ctx, &sdk.CallToolParams{Name: "hello"}); err != nil || !res.IsError {
		t.Fatalf("a tool outside the profile ran: %v %+v", err, res)
	}
	if a := audit.String(); !strings.Contains(a, `"profile":"ops"`) || !strings.Contains(a, `"identity":"token:dev"`) || strings.Contains(a, devToken) {
		t.Fatalf("audit lacks the profile or the token's name, or has the token: %s", a)
	}
	var scrape bytes.Buffer
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+opsToken)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		if _, err := scrape.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if !strings.Contains(scrape.String(), `agent_tools_tool_calls_total{outcome="ok",profile="ops",provider="local",tool="deploy"} 1`) {
		t.Fatalf("metrics lack the profile label:\n%s", grepLines(scrape.String(), "tool_calls_total"))
	}

	req, _ = http.NewRequest("POST", srv.URL+transport.ProfilePath+"opz", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+opsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error    string   `json:"error"`
		Profiles []string `json:"profiles"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 404 || !slices.Equal(body.Profiles, []string{"ops"}) {
		t.Fatalf("unknown profile: %d %+v %v", resp.StatusCode, body, err)
	}
	req, _ = http.NewRequest("POST", srv.URL+transport.ProfilePath+"ops", strings.NewReader(`{}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a profile endpoint without a token: %v %v", err, resp.StatusCode)
	}
}

// Options.Profile (serve --profile) makes the main facade the profile's.
func TestServeProfile(t *testing.T) {
	p := profileProject(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: p.dir, Profile: "ops", AuditDefault: &testutil.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var names []string
	for _, tl := range a.Facade.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"deploy"}) {
		t.Fatalf("serve --profile ops lists %v", names)
	}
	if _, err := app.New(ctx, app.Options{ProjectDir: p.dir, Profile: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown profile "nope" (configured: ops)`) {
		t.Fatalf("unknown profile: %v", err)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
