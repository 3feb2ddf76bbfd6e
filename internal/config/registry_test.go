package config_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	_ "github.com/agent-tools/agent-tools/internal/provider/kinds"
)

func TestRegistrySection(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "PRIVATE" {
			return "https://mcp.acme.example/", true
		}
		return "", false
	}
	for _, tc := range []struct {
		name, doc string
		urls      []string
		pin       string
		err       string
	}{
		{name: "absent", doc: "mode: progressive\n"},
		{name: "one url", doc: "registry:\n  url: https://registry.modelcontextprotocol.io/\n", urls: []string{"https://registry.modelcontextprotocol.io"}},
		{name: "a list, private first", doc: "registry:\n  url: [\"${PRIVATE}\", https://registry.modelcontextprotocol.io]\n",
			urls: []string{"https://mcp.acme.example", "https://registry.modelcontextprotocol.io"}},
		{name: "not http", doc: "registry:\n  url: ftp://x\n", err: "agent-tools.yaml:2:8: registry.url: a registry URL must be an http(s) URL"},
		{name: "bad item", doc: "registry:\n  url: [https://a.example, nope]\n", err: "registry.url[1]: a registry URL must be"},
		{name: "unknown key", doc: "registry:\n  urls: https://a.example\n", err: `unknown key "urls"`},
		{name: "provider pin", doc: "providers:\n  - id: ev\n    kind: mcp\n    command: npx\n    pin: quarantine\n", pin: "quarantine"},
		{name: "provider pin warn", doc: "providers:\n  - id: ev\n    kind: mcp\n    command: npx\n    pin: warn\n",
			err: `providers[0].pin: unknown pin mode "warn" for a provider (want quarantine; security.pin sets the default)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("agent-tools.yaml", []byte(tc.doc), env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Registry.URL, tc.urls) {
				t.Errorf("urls %q, want %q", cfg.Registry.URL, tc.urls)
			}
			if tc.pin != "" && cfg.Providers[0].Pin != tc.pin {
				t.Errorf("pin %q", cfg.Providers[0].Pin)
			}
		})
	}
}
