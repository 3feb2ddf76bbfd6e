package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/console"
)

// TestAgentCannotConfirmItsOwnMutations (#44 item 3): under confirm: human
// or token, the agent's own bearer token posting {"confirm": true} to the
// console's call API is no person's approval: refused with 403 and the tool
// does not run, for an unrestricted token (an operator by default) and a
// rule-restricted one alike. An operator logged in with the console's
// cookie (and its CSRF token) confirms, as before. The approvals API
// refuses a bearer token's answer the same way (TestApprovalsRefuseBearer).
func TestAgentCannotConfirmItsOwnMutations(t *testing.T) {
	const (
		agent  = "agent-token-for-the-self-confirm-test"
		intern = "intern-token-for-the-self-confirm-test"
		person = "person-token-for-the-self-confirm-test"
	)
	for _, mode := range []string{"human", "token"} {
		t.Run(mode, func(t *testing.T) {
			cfg := "policy:\n  confirm: " + mode + "\n  rules:\n    - identities: [\"" + tokenIdentity(intern) + "\"]\n      allow: [\"*wipe*\", \"*greet*\"]\n"
			f := newFixtureWith(t, cfg, nil, agent, intern, "console:"+person)
			body := `{"tool":"` + f.canonical("wipe") + `","confirm":true}`
			for _, tok := range []string{agent, intern} {
				res := f.do("POST", "/ui/api/call", body, "Authorization", "Bearer "+tok, "Content-Type", "application/json")
				text := readAll(t, res)
				if res.StatusCode != http.StatusForbidden || !strings.Contains(text, "approve") {
					t.Errorf("a bearer token confirming its own call: %d %s", res.StatusCode, text)
				}
			}
			if n := f.demo.wiped.Load(); n != 0 {
				t.Fatalf("the mutation ran %d times on a bearer token's confirmation", n)
			}
			// A cookie session opened with the agent's own token is the
			// agent's too.
			cookie, csrf := f.tokenLogin(agent)
			res := f.do("POST", "/ui/api/call", body, "Cookie", cookie, console.CSRFHeader, csrf)
			if text := readAll(t, res); res.StatusCode != http.StatusForbidden || !strings.Contains(text, "cannot approve") {
				t.Errorf("a session logged in with the agent's token confirming: %d %s", res.StatusCode, text)
			}
			if n := f.demo.wiped.Load(); n != 0 {
				t.Fatalf("the mutation ran %d times on a token session's confirmation", n)
			}
			// A person's console-only token: no bearer anywhere, and its
			// session confirms.
			if res := f.do("GET", "/ui/api/providers", "", "Authorization", "Bearer "+person); res.StatusCode != http.StatusUnauthorized {
				t.Errorf("a console-only token as a bearer: %d, want 401", res.StatusCode)
			}
			cookie, csrf = f.tokenLogin(person)
			res = f.do("POST", "/ui/api/call", body, "Cookie", cookie, console.CSRFHeader, csrf)
			var out console.CallResult
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if out.IsError || out.Decision != "confirmed" {
				t.Fatalf("an operator's cookie session confirming: %+v", out)
			}
			if n := f.demo.wiped.Load(); n != 1 {
				t.Fatalf("the operator's confirmed call ran %d times, want 1", n)
			}
		})
	}
}

// tokenLogin logs in at the login form with tok and returns the cookie and
// the page's CSRF token.
func (f *fixture) tokenLogin(tok string) (cookie, csrf string) {
	f.t.Helper()
	res := f.do("POST", "/ui/login", url.Values{"token": {tok}}.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		f.t.Fatalf("token login: %d %v", res.StatusCode, res.Cookies())
	}
	ck := res.Cookies()[0]
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
