package config_test

import (
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

func TestOverridesAndSecurity(t *testing.T) {
	const head = "providers:\n  - id: gh\n    kind: mcp\n    command: x\n    overrides:\n"
	for _, tc := range []struct{ name, src, err string }{
		{"ok", head + "      s: {description: D, title: T, annotations: {readOnlyHint: true, destructiveHint: false}, defaults: {repo: a/b, n: 3, o: {k: [1]}}, hide: [repo]}\n", ""},
		{"hide without default", head + "      s: {hide: [repo]}\n", `hidden argument "repo" needs a value under defaults`},
		{"unknown key", head + "      s: {describe: x}\n", `unknown key "describe"`},
		{"unknown annotation", head + "      s: {annotations: {openWorld: true}}\n", `unknown key "openWorld"`},
		{"annotation not bool", head + "      s: {annotations: {readOnlyHint: maybe}}\n", `readOnlyHint`},
		{"hide not a list", head + "      s: {hide: repo, defaults: {repo: x}}\n", "want a list"},
		{"not a mapping", head + "      s: [1]\n", "want a mapping"},
		{"pin ok", "security: {pin: quarantine}\n", ""},
		{"pin unknown", "security: {pin: loud}\n", `unknown pin mode "loud"`},
		{"security unknown key", "security: {pins: warn}\n", `unknown key "pins"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Parse("agent-tools.yaml", []byte(tc.src), func(string) (string, bool) { return "", false })
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tc.name == "ok" {
					o := c.Overrides()["gh"]["s"]
					if o.Description != "D" || o.Title != "T" || !*o.ReadOnly || *o.AlwaysConfirm ||
						string(o.Defaults["repo"]) != `"a/b"` || string(o.Defaults["n"]) != `3` || string(o.Defaults["o"]) != `{"k":[1]}` || o.Hide[0] != "repo" {
						t.Fatalf("%+v", o)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func FuzzOverrides(f *testing.F) {
	f.Add("      s: {description: D, defaults: {a: 1}, hide: [a]}\n")
	f.Add("      s: {annotations: {readOnlyHint: true}}\n")
	f.Fuzz(func(t *testing.T, body string) {
		src := "providers:\n  - id: gh\n    kind: mcp\n    command: x\n    overrides:\n" + body
		c, err := config.Parse("agent-tools.yaml", []byte(src), func(string) (string, bool) { return "", false })
		if err != nil {
			return
		}
		for _, m := range c.Overrides() {
			for _, o := range m {
				for _, h := range o.Hide {
					if _, ok := o.Defaults[h]; !ok && h != "" {
						t.Fatalf("hidden %q accepted without a default", h)
					}
				}
			}
		}
	})
}
