package app

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/registry"
)

func TestBuildProviderMCP(t *testing.T) {
	c, err := config.Parse("agent-tools.yaml", []byte(`providers:
  - {id: ev, kind: mcp, command: node, args: [s.js], readonly: [echo], timeout: 30s, prefix: ""}
  - {id: remote, kind: mcp, url: "http://127.0.0.1:1/mcp", requireConfirm: false}
  - {id: off, kind: mcp, command: x, env: {K: "${NOPE_NOT_SET}"}, enabled: false}
  - {id: api, kind: openapi, spec: x.yaml}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := buildProvider(c.Providers[0])
	if err != nil {
		t.Fatal(err)
	}
	mp, ok := p.(*mcp.Provider)
	if !ok {
		t.Fatalf("built %T", p)
	}
	defer mp.Close()
	info := mp.Info()
	if info.ID != "ev" || info.Kind != "mcp" || !info.HostLocal || !info.RequireConfirm || info.Timeout.Seconds() != 30 {
		t.Errorf("info = %+v", info)
	}
	if o := mcpOptions(c.Providers[1]); o.BareNames || o.RequireConfirm || o.URL == "" || c.Providers[1].Prefix != nil {
		t.Errorf("remote options = %+v", o)
	}
	if _, err := buildProvider(c.Providers[2]); err == nil || !strings.Contains(err.Error(), "NOPE_NOT_SET") {
		t.Errorf("unresolved: %v", err)
	}
	if _, err := buildProvider(c.Providers[3]); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("openapi: %v", err)
	}
}

func TestFinishProvidersLoadsPlugins(t *testing.T) {
	root := t.TempDir()
	cfgDir, project := filepath.Join(root, "cfg"), filepath.Join(root, "project")
	write := func(dir, name, manifest string) {
		pd := filepath.Join(dir, name)
		if err := os.MkdirAll(pd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pd, "plugin.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(cfgDir, "agent-tools-plugin-kite", `{"name":"kite","skills":["./s.mjs"],"provider":{"command":"./server"}}`)
	write(cfgDir, "agent-tools-plugin-dup", `{"name":"ev","provider":{"command":"./server"}}`)
	write(project, "agent-tools-plugin-broken", `{"name":"broken"}`)
	write(project, "agent-tools-plugin-off", `{"name":"off","provider":{"url":"http://h/mcp","enabled":false}}`)

	c, err := config.Parse(filepath.Join(cfgDir, "agent-tools.yaml"), []byte("providers:\n  - {id: ev, kind: mcp, command: x}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &App{Config: c, Registry: registry.New(nil), log: slog.New(slog.DiscardHandler)}
	defer a.Close()
	p, _ := buildProvider(c.Providers[0])
	a.add(p)
	a.finishProviders(Options{ProjectDir: project, Env: func(string) (string, bool) { return "", false }})

	kite, info, ok := a.Registry.Provider("kite")
	if !ok || info.Kind != "mcp" || info.Description != "Plugin kite" {
		t.Fatalf("kite: %v %+v", ok, info)
	}
	if kp := kite.(*mcp.Provider); kp == nil {
		t.Fatal("not an mcp provider")
	}
	var lines []string
	for _, d := range a.loadErrors {
		lines = append(lines, d.Provider+" "+d.Status+" "+strings.ReplaceAll(d.Reason, root, "ROOT"))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		`agent-tools-plugin-broken failed plugin skipped: missing "provider"`,
		"kite skipped 1 skill(s) ignored: seed skills are JavaScript modules",
		`ev failed plugin skipped: the config already declares provider "ev"`,
		"off skipped plugin disabled",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor lines lack %q:\n%s", want, got)
		}
	}
}
