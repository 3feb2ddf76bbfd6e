package mcp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/tests/configtest"
)

func TestMCPAuthDecodes(t *testing.T) {
	src := `providers:
  - id: github
    kind: mcp
    url: https://api.githubcopilot.com/mcp/
    auth: { type: oauth, clientId: Iv1.abc, clientSecret: "${EV_KEY}", scopes: [repo, read:org], redirectPort: 8976 }
  - id: m2m
    kind: mcp
    url: https://mcp.example.com/mcp
    auth: { type: client_credentials, clientId: svc, privateKeyFile: keys/svc.pem }
`
	c, err := configtest.Parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Providers[0].Spec.(*mcp.Spec).Auth
	if a.Type != "oauth" || a.ClientID != "Iv1.abc" || a.ClientSecret != configtest.Env["EV_KEY"] || !slices.Equal(a.Scopes, []string{"repo", "read:org"}) || a.RedirectPort != 8976 {
		t.Errorf("auth = %+v", a)
	}
	if !slices.ContainsFunc(c.Secrets(), func(s config.Secret) bool { return s.Value == configtest.Env["EV_KEY"] }) {
		t.Error("auth.clientSecret is not registered as a secret")
	}
	if r := c.Redacted().Providers[0].Spec.(*mcp.Spec).Auth; r.ClientSecret != "***" {
		t.Errorf("redacted clientSecret = %q", r.ClientSecret)
	}
	if k := c.Providers[1].Spec.(*mcp.Spec).Auth.PrivateKeyFile; !strings.HasPrefix(k, c.Dir) {
		t.Errorf("privateKeyFile %q not resolved against %q", k, c.Dir)
	}
}

func TestMCPAuthErrors(t *testing.T) {
	cases := []struct{ entry, want string }{
		{"url: https://x/mcp\n    auth: {type: basic}", "auth.type must be"},
		{"url: https://x/mcp\n    auth: oauth", "want a mapping"},
		{"url: https://x/mcp\n    auth: {type: oauth, bogus: 1}", "bogus"},
		{"command: srv\n    auth: {type: oauth}", `applies only to HTTP servers`},
		{"url: https://x/mcp\n    auth: {type: client_credentials}", `needs "clientId"`},
		{"url: https://x/mcp\n    auth: {type: client_credentials, clientId: a}", `needs "clientSecret" or "privateKeyFile"`},
		{"url: https://x/mcp\n    auth: {type: client_credentials, clientId: a, clientSecret: b, privateKeyFile: k}", "not both"},
		{"url: https://x/mcp\n    auth: {type: oauth, redirectPort: 70000}", "redirectPort must be a port"},
		{"url: https://x/mcp\n    auth: {type: oauth, clientMetadataUrl: http://x/}", "https URL with a path"},
		{"url: https://x/mcp\n    auth: {type: oauth, privateKeyFile: k}", "applies to type client_credentials"},
		{"url: https://x/mcp\n    auth: {type: oauth, clientSecret: s}", "needs auth.clientId"},
		{"url: https://x/mcp\n    auth: {type: cross_app, clientId: a, idpIssuer: https://idp}", `needs "idpClientId"`},
		{"url: https://x/mcp\n    auth: {type: oauth, idToken: t}", "applies to type cross_app"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			_, err := configtest.Parse(t, "providers:\n  - id: x\n    kind: mcp\n    "+tc.entry+"\n")
			lines := configtest.ErrorsOf(t, err)
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.want) }) {
				t.Errorf("errors %q, want one containing %q", lines, tc.want)
			}
		})
	}
}

// FuzzMCPAuthConfig parses auth blocks: every error has a position and
// none shows a variable's value.
func FuzzMCPAuthConfig(f *testing.F) {
	f.Add("{type: oauth, clientId: a, clientSecret: ${EV_KEY}, scopes: [x], redirectPort: 1}")
	f.Add("{type: client_credentials, clientId: a, privateKeyFile: k.pem}")
	f.Add("{type: oauth, clientMetadataUrl: https://x/c.json}")
	f.Fuzz(func(t *testing.T, block string) {
		if len(block) > 512 {
			return
		}
		src := "providers:\n  - id: x\n    kind: mcp\n    url: https://x/mcp\n    auth: " + block + "\n"
		_, err := config.Parse("f.yaml", []byte(src), configtest.Lookup)
		if err == nil {
			return
		}
		e, ok := config.AsErrors(err)
		if !ok || len(e.List) == 0 {
			t.Fatalf("error is not a non-empty *Errors: %v", err)
		}
		for _, x := range e.List {
			if x.Line <= 0 || x.Msg == "" {
				t.Fatalf("error without position: %#v", x)
			}
			if strings.Contains(x.Msg, configtest.Env["EV_KEY"]) {
				t.Fatalf("error leaks a variable's value: %s", x.Msg)
			}
		}
	})
}
