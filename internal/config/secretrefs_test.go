package config_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/secrets"
)

func TestSecretRefErrors(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"unknown store", "providers:\n  - {id: a, kind: mcp, url: http://127.0.0.1/mcp, headers: {Authorization: \"Bearer ${keyrng:gh/tok}\"}}\n",
			`r.yaml:2:76: providers[0].headers.Authorization: unknown secret store "keyrng" in ${keyrng:gh/tok}; did you mean "keyring"?`},
		{"bad keyring key", "server:\n  http:\n    tokens: [\"${keyring:solo}\"]\n",
			`server.http.tokens[0]: malformed secret reference ${keyring:solo}: the key must be SERVICE/ACCOUNT, both non-empty; want ${keyring:SERVICE/ACCOUNT}`},
		{"age without key", "index:\n  embeddings: {url: http://127.0.0.1:1/api/embed, model: m, headers: {X-Key: \"${age:s.yaml}\"}}\n",
			`the key must be FILE#KEY`},
		{"unknown command", "secrets:\n  commands:\n    vault-gh: [vault, kv, get, -field=token, secret/gh]\nserver:\n  http:\n    tokens: [\"${cmd:vault-hg}\"]\n",
			`server.http.tokens[0]: ${cmd:vault-hg} names no command under secrets.commands; did you mean "vault-gh"?`},
		{"command with no argv", "secrets:\n  commands:\n    x: []\n", `secrets.commands.x: want the command as a list`},
		{"command using a reference", "secrets:\n  commands:\n    x: [op, read, \"${pass:a/b}\"]\n", `cannot itself use a secret reference`},
		{"negative cache", "secrets:\n  cacheFor: -1s\n", `secrets.cacheFor: must not be negative`},
		{"misspelt section key", "secrets:\n  cacheFr: 1m\n", `did you mean "cacheFor"?`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("r.yaml", []byte(c.doc), func(string) (string, bool) { return "", false })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

func TestSecretRefsKeptUntilUse(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hdr"), []byte("file-hdr-canary-8Jq\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tok"), []byte("file-tok-canary-3Pz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := `
secrets:
  cacheFor: 1m
providers:
  - id: up
    kind: mcp
    url: http://127.0.0.1:1/mcp
    headers: {Authorization: "Bearer ${file:hdr}", X-Env: "${HOMEISH:-x}"}
  - id: broken
    kind: mcp
    command: node
    env: {API_KEY: "${file:absent}"}
server:
  http:
    tokens: ["${file:tok}"]
`
	path := filepath.Join(dir, "agent-tools.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	// Parsed, not resolved: the file holds references, and nothing was read.
	if got := c.Providers[0].Spec.(*mcp.Spec).Headers["Authorization"]; got != "Bearer ${file:hdr}" {
		t.Fatalf("parse resolved the reference: %q", got)
	}
	if len(c.SecretRefs()) != 3 || c.SecretRefs()[0].Ref.String() != "${file:hdr}" || c.SecretRefs()[0].Pos.Line != 8 {
		t.Fatalf("SecretRefs = %+v", c.SecretRefs())
	}
	r := secrets.NewResolver()
	c.ConfigureResolver(r)
	if r.CacheFor.Minutes() != 1 || r.Dir != dir {
		t.Errorf("resolver not configured: %v %q", r.CacheFor, r.Dir)
	}
	if err := c.ResolveSecrets(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if c.Server.HTTP.Tokens[0] != "file-tok-canary-3Pz" {
		t.Errorf("server token not resolved")
	}
	if got := redact.String("x file-tok-canary-3Pz"); got != "x [redacted: file:tok]" {
		t.Errorf("the resolved value is not registered with the redactor: %q", got)
	}
	p, err := config.ResolveProvider(context.Background(), c.Providers[0], r)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Spec.(*mcp.Spec).Headers["Authorization"]; got != "Bearer file-hdr-canary-8Jq" {
		t.Errorf("provider header = %q", got)
	}
	if got := c.Providers[0].Spec.(*mcp.Spec).Headers["Authorization"]; got != "Bearer ${file:hdr}" {
		t.Errorf("ResolveProvider changed the config it was given: %q", got)
	}
	_, err = config.ResolveProvider(context.Background(), c.Providers[1], r)
	if err == nil || !strings.Contains(err.Error(), "${file:absent}: file store: cannot read "+filepath.Join(dir, "absent")) {
		t.Errorf("unresolvable reference: %v", err)
	}
}

func TestSecretRefOutsideProvidersFailsLoad(t *testing.T) {
	c, err := config.Parse(filepath.Join(t.TempDir(), "x.yaml"), []byte("server:\n  http:\n    tokens: [\"${file:none}\"]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := secrets.NewResolver()
	c.ConfigureResolver(r)
	err = c.ResolveSecrets(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "x.yaml:3:14: server.http.tokens[0]: ${file:none}: file store: cannot read") {
		t.Fatalf("got %v", err)
	}
	if c.Server.HTTP.Tokens[0] != "${file:none}" {
		t.Errorf("a failed resolution must leave the reference, never an empty value: %q", c.Server.HTTP.Tokens[0])
	}
}
