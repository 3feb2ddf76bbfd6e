package plugin

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	_ "github.com/agent-tools/agent-tools/internal/provider/kinds" // the kinds a manifest may name
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
)

var testEnv = map[string]string{"N8N_TOKEN": "n8n-secret-value", "PLUGINS": ""}

func lookup(k string) (string, bool) {
	v, ok := testEnv[k]
	return v, ok
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", ``, `plugin.json: empty file: want a JSON object`},
		{"not json", `name: x`, `plugin.json: invalid JSON at line 1: invalid character 'a' in literal null (expecting 'u')`},
		{"syntax error later", "{\n  \"name\": \"x\",\n  \"prefix\": \n}", `plugin.json: invalid JSON at line 4: invalid character '}' looking for beginning of value`},
		{"array", `[1]`, `plugin.json: want a JSON object, got array`},
		{"null", `null`, `plugin.json: want a JSON object, got null`},
		{"trailing data", `{"name":"x"} {}`, `plugin.json: invalid JSON: data after the object`},
		{"no name", `{"provider":{"command":"x"}}`, `missing "name" (and "prefix"): one of them becomes the provider id`},
		{"bad prefix", `{"name":"gh","prefix":"gh-cli","provider":{"command":"x"}}`,
			`prefix: "gh-cli" is not a valid provider id: use 1 to 32 lowercase letters and digits (it becomes the tool-name prefix)`},
		{"bad name as id", `{"name":"GitHub","provider":{"command":"x"}}`,
			`name: "GitHub" is not a valid provider id: use 1 to 32 lowercase letters and digits (it becomes the tool-name prefix)`},
		{"wrong types", `{"name":5,"readonlyTools":"a","requireConfirm":"no","skills":[1],"provider":{"command":"x"}}`,
			"name: want a string\nreadonlyTools: want a list of tool names\nskills: want a list of strings\nrequireConfirm: want true or false\n" +
				`missing "name" (and "prefix"): one of them becomes the provider id`},
		{"empty readonly entry", `{"name":"a","readonlyTools":["x",""],"provider":{"command":"x"}}`, `readonlyTools[1]: empty tool name`},
		{"js adapter only", `{"name":"n8n","adapter":"./adapter.mjs"}`,
			`adapter "./adapter.mjs" is a JavaScript module, which agent-tools does not run: describe the server in a "provider" object instead (e.g. {"kind": "mcp", "command": "node", "args": ["server.js"]})`},
		{"no provider", `{"name":"a"}`, `missing "provider": an object such as {"kind": "mcp", "command": "...", "args": [...]} or {"kind": "mcp", "url": "..."}`},
		{"provider not object", `{"name":"a","provider":"node server.js"}`, `provider: want a JSON object, got string`},
		{"provider id", `{"name":"a","provider":{"id":"b","command":"x"}}`, `provider.id: not allowed; the plugin's "prefix" (or "name") is the provider id`},
		{"both readonly", `{"name":"a","readonlyTools":["x"],"provider":{"command":"x","readonly":["y"]}}`, `provider.readonly: also given as "readonlyTools"; keep one`},
		{"provider without command or url", `{"name":"a","provider":{}}`, `provider: kind mcp needs "command" (a stdio server) or "url" (a Streamable HTTP server)`},
		{"provider unknown key", `{"name":"a","provider":{"comand":"node"}}`,
			"provider: kind mcp needs \"command\" (a stdio server) or \"url\" (a Streamable HTTP server)\nprovider: unknown key \"comand\"; did you mean \"command\"?"},
		{"provider bad url", `{"name":"a","provider":{"url":"ftp://x"}}`, `provider.url: invalid URL "ftp://x": want http:// or https:// with a host`},
		{"provider missing env", `{"name":"a","provider":{"url":"http://h/mcp","headers":{"Authorization":"Bearer ${NOPE_TOKEN}"}}}`,
			`provider.headers.Authorization: environment variable NOPE_TOKEN is not set`},
		{"provider wrong kind", `{"name":"a","provider":{"kind":"rest","url":"http://h"}}`, `provider.kind: unknown kind "rest" (want mcp, openapi, cli or workers)`},
		{"reserved id", `{"name":"local","provider":{"command":"x"}}`, `provider.id: id "local" is reserved (local, builtin or agent)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("/plugins/agent-tools-plugin-x", []byte(tt.src), lookup)
			if err == nil {
				t.Fatalf("no error; plugin %+v", p)
			}
			if err.Error() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", err, tt.want)
			}
			if strings.Contains(err.Error(), "n8n-secret-value") {
				t.Error("error leaks a secret")
			}
		})
	}
}

func TestParse(t *testing.T) {
	dir := "/plugins/agent-tools-plugin-n8n"
	p, err := Parse(dir, []byte(`{
  "name": "n8n",
  "prefix": "n8n",
  "adapter": "./adapter.mjs",
  "adapterExport": "N8nMcpAdapter",
  "readonlyTools": ["search_workflows", "get_execution"],
  "skills": ["./skills/a.mjs", "./skills/b.mjs"],
  "discoverHint": "workflows and executions",
  "requireConfirm": false,
  "version": "1.2.0",
  "provider": {"url": "http://127.0.0.1:5678/mcp", "headers": {"Authorization": "Bearer ${N8N_TOKEN}"}, "timeout": "45s", "trustAnnotations": true}
}`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	pc := p.Provider
	want := config.Provider{
		ID: "n8n", Kind: "mcp", Description: "Plugin n8n", DiscoverHint: "workflows and executions", Enabled: true,
		Spec:     &mcp.Spec{URL: "http://127.0.0.1:5678/mcp", Headers: map[string]string{"Authorization": "Bearer n8n-secret-value"}, TrustAnnotations: true},
		ReadOnly: []string{"search_workflows", "get_execution"}, RequireConfirm: false,
		Timeout: config.Duration{Duration: 45 * time.Second}, Pos: pc.Pos,
	}
	if !reflect.DeepEqual(pc, want) {
		t.Errorf("provider:\n%+v\nwant:\n%+v", pc, want)
	}
	wantWarn := []string{`unknown key "version" ignored`,
		`adapter "./adapter.mjs" ignored: the provider object is used`}
	if !reflect.DeepEqual(p.Warnings, wantWarn) {
		t.Errorf("warnings = %q", p.Warnings)
	}

	// stdio: kind defaults to mcp, paths resolve against the plugin directory.
	p, err = Parse(dir, []byte(`{"name":"Kite Lite","prefix":"kite","description":"Kite, lite","provider":{"command":"./bin/server","args":["--stdio"],"env":{"K":"v"}}}`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if pc := p.Provider; pc.ID != "kite" || pc.Kind != "mcp" || pc.Spec.(*mcp.Spec).Cwd != dir || pc.Spec.(*mcp.Spec).Command != "./bin/server" || !pc.RequireConfirm || pc.Description != "Kite, lite" {
		t.Errorf("stdio provider = %+v", pc)
	}
	p, err = Parse(dir, []byte(`{"name":"kite","provider":{"command":"node","cwd":"srv","enabled":false}}`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if pc := p.Provider; pc.Spec.(*mcp.Spec).Cwd != filepath.Join(dir, "srv") || pc.Enabled {
		t.Errorf("cwd/enabled = %+v", pc)
	}
}

func writePlugin(t *testing.T, dir, name, manifest string) string {
	t.Helper()
	pd := filepath.Join(dir, name)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	if manifest != "" {
		if err := os.WriteFile(filepath.Join(pd, ManifestName), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return pd
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	cfgDir, envDir, envDir2, project := filepath.Join(root, "cfg"), filepath.Join(root, "env"), filepath.Join(root, "env2"), filepath.Join(root, "project")
	ok := func(id string) string { return `{"name":"` + id + `","provider":{"command":"x"}}` }
	writePlugin(t, cfgDir, "agent-tools-plugin-b", ok("bee"))
	writePlugin(t, cfgDir, "agent-tools-plugin-a", ok("ant"))
	writePlugin(t, cfgDir, "not-a-plugin", ok("nope"))
	writePlugin(t, cfgDir, "agent-tools-plugin-broken", `{"name":`)
	writePlugin(t, cfgDir, "agent-tools-plugin-empty", "") // no plugin.json
	if err := os.WriteFile(filepath.Join(cfgDir, "agent-tools-plugin-file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	writePlugin(t, envDir, "agent-tools-plugin-c", ok("cat"))
	writePlugin(t, envDir2, "agent-tools-plugin-a2", ok("ant")) // id taken
	writePlugin(t, project, "agent-tools-plugin-d", ok("dog"))
	if err := os.Symlink(filepath.Join(cfgDir, "agent-tools-plugin-a"), filepath.Join(project, "agent-tools-plugin-alias")); err != nil {
		t.Fatal(err)
	}

	env := func(k string) (string, bool) {
		if k == EnvDirs {
			return envDir + string(filepath.ListSeparator) + envDir2 + string(filepath.ListSeparator) + cfgDir, true
		}
		return "", false
	}
	dirs := SearchDirs(cfgDir, project, env)
	if !reflect.DeepEqual(dirs, []string{cfgDir, envDir, envDir2, project}) {
		t.Errorf("dirs = %q", dirs)
	}
	plugins, errs := Discover(append(dirs, filepath.Join(root, "missing")), env)
	var ids []string
	for _, p := range plugins {
		ids = append(ids, p.Provider.ID)
	}
	if !reflect.DeepEqual(ids, []string{"ant", "bee", "cat", "dog"}) {
		t.Errorf("ids = %q", ids)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, strings.ReplaceAll(e.Error(), root, "ROOT"))
	}
	want := []string{
		"plugin ROOT/cfg/agent-tools-plugin-broken: plugin.json: invalid JSON: unexpected EOF",
		"plugin ROOT/cfg/agent-tools-plugin-empty: open ROOT/cfg/agent-tools-plugin-empty/plugin.json: no such file or directory",
		`plugin ROOT/env2/agent-tools-plugin-a2: provider id "ant" is already used by the plugin in ROOT/cfg/agent-tools-plugin-a`,
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

func TestLoadTooBig(t *testing.T) {
	pd := writePlugin(t, t.TempDir(), "agent-tools-plugin-big", `{"name":"big","description":"`+strings.Repeat("x", MaxManifestBytes)+`"}`)
	if _, err := Load(pd, lookup); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v", err)
	}
}

func FuzzParsePlugin(f *testing.F) {
	for _, s := range []string{
		`{"name":"n8n","prefix":"n8n","readonlyTools":["a"],"skills":["./s.mjs"],"discoverHint":"h","requireConfirm":false,"provider":{"url":"http://h/mcp","headers":{"A":"${N8N_TOKEN}"}}}`,
		`{"name":"kite","provider":{"command":"node","args":["s.js"],"env":{"K":"$${X}"},"cwd":"srv","timeout":"3s"}}`,
		`{"name":"x","adapter":"./a.mjs"}`,
		`{"name":"p","provider":{"kind":"cli","tools":[{"name":"t","argv":["ls"]}]}}`,
		`{"name":"a","provider":{"<<":{"command":"x"}}}`,
		`[]`, `null`, `{"provider":null}`, "{\"name\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("/plugins/agent-tools-plugin-f", data, lookup)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		pc := p.Provider
		if !validID(pc.ID) || pc.Kind == "" {
			t.Fatalf("accepted provider with id %q kind %q", pc.ID, pc.Kind)
		}
		// What Parse accepts, the config accepts.
		cfg := config.Default("/plugins")
		cfg.Providers = []config.Provider{pc}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted plugin fails config validation: %v\n%s", err, data)
		}
	})
}
