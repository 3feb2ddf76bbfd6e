package config

import "testing"

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
