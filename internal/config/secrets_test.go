package config_test

import (
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider/openapi"
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
	c, err := config.Parse("s.yaml", []byte(doc), lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range c.Secrets() {
		got[s.Name] = s.Value
		// The redactor shows a value by its marker: never a ${VAR}, which
		// would read as an interpolation that never ran.
		if strings.Contains(s.Name, "${") {
			t.Errorf("%q is named as a reference", s.Name)
		}
	}
	want := map[string]string{
		"[redacted: KEY]": "query-secret-1", "[redacted: SEG]": "path-secret-2", "[redacted: HDR]": "header-secret-3",
		"[redacted: ENVV]": "env-secret-4", "[redacted: ARG]": "arg-secret-5", "[redacted: TOK]": "inbound-token-6",
		"[redacted: PASS]": "userinfo-pass-7", "[redacted: USER]": "alice", "[redacted: USER]:[redacted: PASS]": "alice:userinfo-pass-7",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"[redacted: HOST]", "[redacted: PORT]", "[redacted: DESC]"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s is not secret-bearing but was collected", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("collected %v", got)
	}
	if (&config.Config{}).Secrets() != nil {
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
			_, err := config.Parse(dir+"/agent-tools.yaml", []byte("audit:\n  path: "+c.path+"\n"), lookup)
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

// A regression guard: auth.bearer, the login body and the spec URL's
// query were once not registered (the key names said nothing); every ${VAR} in an
// auth, header, env, login or URL position is, and a literal credential in a
// URL's query or userinfo too.
func TestSecretsByPosition(t *testing.T) {
	env := map[string]string{
		"BEARER": "cnry-bearer-1", "SPECQ": "cnry-specq-2", "LUSER": "cnry-luser-3", "LPASS": "cnry-lpass-4",
		"BUSER": "cnry-buser-5", "BPASS": "cnry-bpass-6", "AH": "cnry-authhdr-7", "EMB": "cnry-embed-8",
		"BASE": "cnry-basepath-9", "HOST": "127.0.0.1", "WENV": "cnry-wenv-10", "PLAIN": "not-secret-11", "SPECDIR": "/home/someone",
	}
	lookupEnv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	doc := `
providers:
  - id: api
    kind: openapi
    spec: "http://${HOST}:8080/openapi.json?access_token=${SPECQ}"
    baseURL: "http://${HOST}:8080/${BASE}"
    description: "${PLAIN}"
    auth: {bearer: "${BEARER}"}
  - id: pb
    kind: openapi
    spec: "http://127.0.0.1:8090/spec.json?sig=literal-sig-value&v=literal-version"
    auth:
      login: {path: /login, body: {identity: "${LUSER}", password: "${LPASS}"}}
  - id: ba
    kind: openapi
    spec: "http://u:literal-pw-12@127.0.0.1:8090/spec.json"
    auth: {basic: {user: "${BUSER}", password: "${BPASS}"}}
  - id: hd
    kind: openapi
    spec: "${SPECDIR}/api.json"
    auth: {header: {X-Api: "${AH}"}}
index:
  embeddings:
    url: "http://127.0.0.1:1/api/embed"
    model: m
    headers: {X-Emb: "${EMB}"}
`
	c, err := config.Parse("s.yaml", []byte(doc), lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range c.Secrets() {
		got[s.Value] = s.Name
	}
	want := map[string]string{
		"cnry-bearer-1": "[redacted: BEARER]", "cnry-specq-2": "[redacted: SPECQ]", "cnry-luser-3": "[redacted: LUSER]", "cnry-lpass-4": "[redacted: LPASS]",
		"cnry-buser-5": "[redacted: BUSER]", "cnry-bpass-6": "[redacted: BPASS]", "cnry-authhdr-7": "[redacted: AH]", "cnry-embed-8": "[redacted: EMB]",
		"cnry-basepath-9": "[redacted: BASE]", "literal-sig-value": "[redacted]", "literal-pw-12": "[redacted]", "u:literal-pw-12": "[redacted]",
	}
	for v, name := range want {
		if got[v] != name {
			t.Errorf("%s registered as %q, want %q", v, got[v], name)
		}
	}
	// The config as printed (config show, doctor) masks query values and
	// passwords of every URL.
	r := c.Redacted()
	if o := r.Providers[0].Spec.(*openapi.Spec); strings.Contains(o.Spec, "cnry") || !strings.Contains(o.Spec, "access_token=***") {
		t.Errorf("redacted spec URL %q", o.Spec)
	}
	if o := r.Providers[2].Spec.(*openapi.Spec); strings.Contains(o.Spec, "literal-pw") {
		t.Errorf("redacted spec URL %q", o.Spec)
	}
	for _, v := range []string{"127.0.0.1", "not-secret-11", "literal-version", "/home/someone"} {
		if _, ok := got[v]; ok {
			t.Errorf("%s is not a secret but was collected", v)
		}
	}
}

// A URL's userinfo with a literal user and a password from a variable is
// shown with the user as written and the password by its marker.
func TestUserinfoMarkerKeepsLiteralUser(t *testing.T) {
	lookupEnv := func(k string) (string, bool) { return map[string]string{"PASS": "cnry-ui-pass-1"}[k], k == "PASS" }
	c, err := config.Parse("s.yaml", []byte("providers:\n  - id: up\n    kind: mcp\n    url: \"http://alice:${PASS}@127.0.0.1:9/mcp\"\n"), lookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range c.Secrets() {
		got[s.Value] = s.Name
	}
	if got["cnry-ui-pass-1"] != "[redacted: PASS]" || got["alice:cnry-ui-pass-1"] != "alice:[redacted: PASS]" {
		t.Errorf("secrets %v", got)
	}
}
