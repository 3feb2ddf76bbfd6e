package config

import (
	"strings"
	"testing"
)

// The registry marker and the digest of what an entry runs (issue 44,
// item 6): comments, layout and the keys that change nothing of what runs
// keep the digest; the command, args, env, url or headers change it.
func TestRegistryEntryDigest(t *testing.T) {
	const marker = "  # registry: com.example/x@1.2.3 (npm) from https://registry.example\n  # added by `agent-tools registry add`\n"
	base := "providers:\n" + marker + "  - id: x\n    kind: mcp\n    command: npx\n    args: [-y, 'x@1.2.3']\n    env:\n      KEY: ${KEY} # secret\n    pin: quarantine\n"
	digest := func(doc string) (*RegistryEntry, string) {
		t.Helper()
		cfg, err := Parse("agent-tools.yaml", []byte(doc), func(k string) (string, bool) { return "v-" + k, true })
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		m := cfg.Providers[0].Registry
		if m == nil {
			return nil, ""
		}
		return m, m.Digest
	}
	m, d0 := digest(base)
	if m == nil || m.Name != "com.example/x" || m.Version != "1.2.3" || m.Source != "npm" || m.From != "https://registry.example" || len(d0) != 64 {
		t.Fatalf("marker: %+v", m)
	}
	same := map[string]string{
		"comments":           strings.Replace(base, "# secret", "# another comment", 1),
		"flow vs block":      strings.Replace(base, "args: [-y, 'x@1.2.3']", "args:\n      - -y\n      - \"x@1.2.3\"", 1),
		"id":                 strings.Replace(base, "id: x", "id: renamed", 1),
		"timeout":            strings.Replace(base, "    pin: quarantine\n", "    timeout: 30s\n    pin: quarantine\n", 1),
		"enabled":            strings.Replace(base, "    pin: quarantine\n", "    enabled: true\n    pin: quarantine\n", 1),
		"description":        strings.Replace(base, "    kind: mcp\n", "    kind: mcp\n    description: hello\n", 1),
		"a variable's value": base, // the values of ${KEY} are not in it (digest reads the file as written)
	}
	for name, doc := range same {
		if _, d := digest(doc); d != d0 {
			t.Errorf("%s changed the digest", name)
		}
	}
	other := map[string]string{
		"an argument":  strings.Replace(base, "args: [-y, 'x@1.2.3']", "args: [-y, '--call=sh', 'x@1.2.3']", 1),
		"the command":  strings.Replace(base, "command: npx", "command: /tmp/npx", 1),
		"an env value": strings.Replace(base, "KEY: ${KEY}", "KEY: ${OTHER}", 1),
		"an env name":  strings.Replace(base, "      KEY: ${KEY} # secret\n", "      KEY: ${KEY}\n      NODE_OPTIONS: --require=/tmp/x\n", 1),
		"a cwd":        strings.Replace(base, "    pin: quarantine\n", "    cwd: /tmp\n    pin: quarantine\n", 1),
	}
	for name, doc := range other {
		if _, d := digest(doc); d == d0 || d == "" {
			t.Errorf("%s kept the digest", name)
		}
	}
	if m, _ := digest(strings.Replace(base, marker, "  # a person's own entry\n", 1)); m != nil {
		t.Errorf("no marker, but %+v", m)
	}
}
