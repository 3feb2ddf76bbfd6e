package console_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
)

// tokenIdentity is the identity the transport gives an unnamed token.
func tokenIdentity(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return "token:" + hex.EncodeToString(sum[:])[:8]
}

// A bearer token that a per-identity rule restricts is no operator: every
// route that shows or changes the runtime refuses it (403), walked from
// the console's own route table so a new route is checked by construction;
// it may still call what its rule allows, through the same pipeline. A
// token no rule restricts is an operator (the default role), and
// policy.operators overrides the default.
func TestConsoleOperatorRole(t *testing.T) {
	const (
		intern = "intern-token-for-the-operator-test"
		admin  = "admin-token-for-the-operator-test"
	)
	cfg := "policy:\n  rules:\n    - identities: [\"" + tokenIdentity(intern) + "\"]\n      allow: [\"*greet*\"]\n"
	f := newFixtureWith(t, cfg, nil, intern, admin)
	routes := f.con.Routes()
	if len(routes) < 15 {
		t.Fatalf("route table has %d routes", len(routes))
	}
	for _, r := range routes {
		path := strings.NewReplacer("{id}", "demo", "{name}", f.canonical("greet"), "{tool}", f.canonical("greet"), "{$}", "").Replace(r.Path)
		res := f.do(r.Method, path, "{}", "Authorization", "Bearer "+intern, "Content-Type", "application/json")
		if r.Operator && res.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s as a restricted token: %d, want 403", r.Method, path, res.StatusCode)
		}
		if !r.Operator && res.StatusCode == http.StatusForbidden {
			t.Errorf("%s %s needs only a login, got 403", r.Method, path)
		}
	}
	res := f.do("POST", "/ui/api/call", `{"tool":"`+f.canonical("greet")+`","args":{"name":"x"}}`, "Authorization", "Bearer "+intern)
	if body := readAll(t, res); res.StatusCode != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("the intern's allowed call: %d %s", res.StatusCode, body)
	}
	if res := f.do("GET", "/ui/api/providers", "", "Authorization", "Bearer "+admin); res.StatusCode != http.StatusOK {
		t.Fatalf("an unrestricted token is an operator by default: %d", res.StatusCode)
	}

	// policy.operators names the operators: nobody else is one.
	g := newFixtureWith(t, "policy:\n  operators: [\""+tokenIdentity(intern)+"\"]\n", nil, intern, admin)
	if res := g.do("GET", "/ui/api/providers", "", "Authorization", "Bearer "+admin); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a token outside policy.operators: %d", res.StatusCode)
	}
	if res := g.do("GET", "/ui/api/providers", "", "Authorization", "Bearer "+intern); res.StatusCode != http.StatusOK {
		t.Fatalf("a token in policy.operators: %d", res.StatusCode)
	}
}
