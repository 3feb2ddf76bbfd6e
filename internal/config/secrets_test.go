package config

import (
	"strings"
	"testing"
)

func TestSecretsCollected(t *testing.T) {
	env := map[string]string{
		"KEY": "query-secret-1", "SEG": "path-secret-2", "HOST": "example.org", "PORT": "8443",
		"HDR": "header-secret-3", "ENVV": "env-secret-4", "ARG": "arg-secret-5", "TOK": "inbound-token-6",
		"USER": "alice", "PASS": "userinfo-pass-7", "DESC": "not-a-secret-8",
	}
	lookupEnv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	doc := `
providers:
  - id: up
    kind: mcp
    url: "http://${USER}:${PASS}@${HOST}:${PORT}/mcp/${SEG}?key=${KEY}"
    headers: {Authorization: "Bearer ${HDR}"}
    description: "${DESC}"
  - id: st
    kind: mcp
    command: node
    args: ["--token", "${ARG}"]
    env: {API_KEY: "${ENVV}"}
server:
  http:
    tokens: ["${TOK}"]
`
	c, err := Parse("s.yaml", []byte(doc), lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range c.Secrets() {
		got[s.Name] = s.Value
	}
	want := map[string]string{
		"${KEY}": "query-secret-1", "${SEG}": "path-secret-2", "${HDR}": "header-secret-3",
		"${ENVV}": "env-secret-4", "${ARG}": "arg-secret-5", "${TOK}": "inbound-token-6",
		"${PASS}": "userinfo-pass-7", "${USER}": "alice", "${USER}:${PASS}": "alice:userinfo-pass-7",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"${HOST}", "${PORT}", "${DESC}"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s is not secret-bearing but was collected", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("collected %v", got)
	}
	if (&Config{}).Secrets() != nil {
		t.Error("a code-built config has no secrets")
	}
}

// audit.path in a missing directory used to pass validate and then fail
// serve without a position.
func TestAuditPathValidated(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, path, want string }{
		{"missing dir", "nope/sub/audit.jsonl", "audit.path: the directory of \"nope/sub/audit.jsonl\" does not exist"},
		{"is a directory", ".", "is a directory"},
		{"ok relative", "audit.jsonl", ""},
		{"off", "off", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(dir+"/agent-tools.yaml", []byte("audit:\n  path: "+c.path+"\n"), lookup)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ":2:") {
				t.Fatalf("err = %v, want %q with a line", err, c.want)
			}
		})
	}
}
