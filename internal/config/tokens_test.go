package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

// Token entries are a token or {name, token}; the name is the identity,
// the token a secret (registered for redaction, never in an error).
func TestNamedTokens(t *testing.T) {
	c, err := parse(t, "server:\n  http:\n    tokens:\n      - ${AGENT_TOOLS_TOKEN}\n      - {name: ci, token: \"${REMOTE_TOKEN}\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	h := c.Server.HTTP
	if !slices.Equal(h.Tokens, []string{"http-secret-value", "remote-secret-value"}) || !slices.Equal(h.TokenNames, []string{"", "ci"}) {
		t.Fatalf("tokens %q names %q", h.Tokens, h.TokenNames)
	}
	if got := config.TokenIdentity(h.Tokens[1], h.TokenNames[1]); got != "token:ci" {
		t.Errorf("identity %q", got)
	}
	if got := config.TokenIdentity("x", ""); !strings.HasPrefix(got, "token:") || len(got) != len("token:")+8 {
		t.Errorf("digest identity %q", got)
	}
	if !slices.Contains(c.Secrets(), config.Secret{Name: "[redacted: REMOTE_TOKEN]", Value: "remote-secret-value"}) {
		t.Errorf("a named token's value is not a secret: %+v", c.Secrets())
	}
	if r := c.Redacted(); r.Server.HTTP.Tokens[1] != "***" || r.Server.HTTP.TokenNames[1] != "ci" {
		t.Errorf("redacted %+v", r.Server.HTTP)
	}
	if d, err := parse(t, "server:\n  http:\n    tokens: [a-token-value]\n"); err != nil || d.Server.HTTP.TokenNames != nil {
		t.Errorf("unnamed tokens: %v %q", err, d.Server.HTTP.TokenNames)
	}
}

func TestNamedTokenErrors(t *testing.T) {
	digest := strings.TrimPrefix(config.TokenIdentity("plain-token-1", ""), "token:")
	cases := []struct{ tokens, want, at string }{
		{`{name: ci}`, `missing required key "token"`, "tokens[0]"},
		{`{name: ci, token: ""}`, "empty token", "tokens[0].token"},
		{`{name: ci, token: "${EMPTY}"}`, "empty token (from ${EMPTY})", "tokens[0].token"},
		{`{name: ci, token: t, scope: x}`, `unknown key "scope"`, "tokens[0]"},
		{`{name: "has space", token: t}`, `token name "has space": want letters`, "tokens[0].name"},
		{`{name: "${NUM}", token: t}`, "write a token's name literally", "tokens[0].name"},
		{`{name: ci, token: [a]}`, "want a string, got a list", "tokens[0].token"},
		{`{name: ci, token: a}, {name: ci, token: b}`, `token name "ci" is already used by server.http.tokens[0]`, "tokens[1].name"},
		{`plain-token-1, {name: "` + digest + `", token: b}`, "is the identity of the unnamed token server.http.tokens[0]", "tokens[1].name"},
		{`[a]`, "want a string, got a list", "tokens[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			_, err := parse(t, "server:\n  http:\n    tokens: ["+tc.tokens+"]\n")
			lines := errorsOf(t, err)
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.want) && strings.Contains(l, tc.at) }) {
				t.Errorf("errors %q, want one at %s containing %q", lines, tc.at, tc.want)
			}
			for _, l := range lines {
				if strings.Contains(l, "remote-secret-value") || strings.Contains(l, "http-secret-value") {
					t.Errorf("error leaks a token: %s", l)
				}
			}
		})
	}
	if _, err := parse(t, "server:\n  http:\n    tokens: [{name: ci, token: \"${REMOTE_TOKEN}\"}, {name: ci2, token: \"${REMOTE_TOKEN}x\"}]\n"); err != nil {
		t.Errorf("two named tokens: %v", err)
	}
}

// FuzzTokens parses token lists: every error has a position and none shows
// a token's value.
func FuzzTokens(f *testing.F) {
	f.Add(`[a, {name: ci, token: "${AGENT_TOOLS_TOKEN}"}]`)
	f.Add("[{name: x}]")
	f.Add("{name: ci}")
	f.Fuzz(func(t *testing.T, list string) {
		if len(list) > 512 {
			return
		}
		_, err := config.Parse("f.yaml", []byte("server:\n  http:\n    tokens: "+list+"\n"), lookup)
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
			if strings.Contains(x.Msg, testEnv["AGENT_TOOLS_TOKEN"]) {
				t.Fatalf("error leaks a token: %s", x.Msg)
			}
		}
	})
}
