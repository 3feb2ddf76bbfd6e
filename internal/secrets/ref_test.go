package secrets

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		body, store, key string
		err              string // substring; "" = ok
	}{
		{body: "keyring:github/token", store: "keyring", key: "github/token"},
		{body: "keyring:api.example.com/v1/ci@example.com", store: "keyring", key: "api.example.com/v1/ci@example.com"},
		{body: "pass:team/github", store: "pass", key: "team/github"},
		{body: "file:/run/secrets/gh", store: "file", key: "/run/secrets/gh"},
		{body: "file:secrets/gh.txt", store: "file", key: "secrets/gh.txt"},
		{body: "age:secrets.enc.yaml#github.token", store: "age", key: "secrets.enc.yaml#github.token"},
		{body: "cmd:vault-gh", store: "cmd", key: "vault-gh"},
		{body: "keyrng:a/b", err: `unknown secret store "keyrng" in ${keyrng:a/b}; did you mean "keyring"?`},
		{body: "vault:x", err: `unknown secret store "vault"`},
		{body: "PASS:x", err: `did you mean "pass"?`},
		{body: ":x", err: "the store before ':' is empty"},
		{body: "keyring:", err: "the key after ':' is empty; want ${keyring:SERVICE/ACCOUNT}"},
		{body: "keyring:noslash", err: "SERVICE/ACCOUNT, both non-empty"},
		{body: "keyring:/acct", err: "SERVICE/ACCOUNT"},
		{body: "keyring:svc/", err: "SERVICE/ACCOUNT"},
		{body: "pass:/abs", err: "may not start with /"},
		{body: "pass:-flag", err: "may not start with / or -"},
		{body: "pass:a//b", err: "empty, . or .. components"},
		{body: "pass:a/../b", err: "empty, . or .. components"},
		{body: "age:file.yaml", err: "FILE#KEY"},
		{body: "age:#k", err: "FILE#KEY"},
		{body: "age:f#", err: "FILE#KEY"},
		{body: "cmd:a b", err: `not " "`},
		{body: "cmd:a/b", err: "a command name is letters"},
		{body: "file: spaced", err: "leading or trailing spaces"},
		{body: "file:a\x00b", err: "control characters"},
		{body: "\n:", err: `"\n:": control characters`},
		{body: "file:a$b", err: "may not contain"},
		{body: "nocolon", err: "want ${STORE:KEY}"},
	} {
		r, err := Parse(c.body)
		if c.err == "" {
			if err != nil || r.Store != c.store || r.Key != c.key {
				t.Errorf("Parse(%q) = %+v, %v; want %s %s", c.body, r, err, c.store, c.key)
			}
			if r.String() != "${"+c.body+"}" {
				t.Errorf("String() = %q", r.String())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Parse(%q) error = %v; want it to contain %q", c.body, err, c.err)
		}
	}
}

func TestIsRefAndFind(t *testing.T) {
	for body, want := range map[string]bool{"VAR": false, "VAR:-def": false, "keyring:a/b": true, "x:": true, "a:-": false} {
		if IsRef(body) != want {
			t.Errorf("IsRef(%q) = %v", body, !want)
		}
	}
	got := Find("Bearer ${keyring:gh/tok} and ${HOME} ${pass:a/b} ${bogus:x} ${file:")
	if len(got) != 2 || got[0] != (Ref{"keyring", "gh/tok"}) || got[1] != (Ref{"pass", "a/b"}) {
		t.Errorf("Find = %+v", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"keyring:a/b", "pass:x/y", "file:/f", "age:f#k", "cmd:n", "keyrng:x", "", ":", "age:#", "pass:../x", "cmd:\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r, err := Parse(body)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error for %q: %v", body, err)
			}
			return
		}
		if Lookup(r.Store) == nil || r.Key == "" {
			t.Fatalf("accepted %q as %+v", body, r)
		}
		// A parsed reference round-trips and is found in text.
		r2, err := ParseRef(r.String())
		if err != nil || r2 != r {
			t.Fatalf("round trip of %q: %+v, %v", body, r2, err)
		}
		if got := Find("x" + r.String() + "y"); len(got) != 1 || got[0] != r {
			t.Fatalf("Find(%q) = %+v", r.String(), got)
		}
	})
}
