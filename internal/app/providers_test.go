package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
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
	p, err := buildProvider(c.Providers[0], provider.Deps{})
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
	remote := c.Providers[1].Spec.(*mcp.Spec)
	if o := mcp.OptionsFrom(provider.HeaderOf(c.Providers[1]), remote, provider.Deps{}); o.BareNames || o.RequireConfirm || o.URL == "" || remote.Prefix != nil {
		t.Errorf("remote options = %+v", o)
	}
	if _, err := buildProvider(c.Providers[2], provider.Deps{}); err == nil || !strings.Contains(err.Error(), "NOPE_NOT_SET") {
		t.Errorf("unresolved: %v", err)
	}
	if _, err := buildProvider(config.Provider{ID: "x", Kind: "nope"}, provider.Deps{}); err == nil || !strings.Contains(err.Error(), "cannot be built") {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestPluginsLoad(t *testing.T) {
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
	g := newGeneration(c, registry.New(nil), slog.New(slog.DiscardHandler))
	defer func() {
		if err := closeAll(g.closers); err != nil {
			t.Error(err)
		}
	}()
	p, _ := buildProvider(c.Providers[0], provider.Deps{})
	g.add(p)
	g.addPlugins(Options{ProjectDir: project, Env: func(string) (string, bool) { return "", false }})
	g.bind()

	kite, info, ok := g.reg.Provider("kite")
	if !ok || info.Kind != "mcp" || info.Description != "Plugin kite" {
		t.Fatalf("kite: %v %+v", ok, info)
	}
	if _, isSkiller := kite.(provider.Skiller); !isSkiller {
		t.Fatal("a plugin that lists skills must serve them")
	}
	var lines []string
	for _, d := range append(g.loadErrors, g.reg.Diagnostics()...) {
		lines = append(lines, d.Provider+" "+d.Status+" "+strings.ReplaceAll(d.Reason, root, "ROOT"))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		`agent-tools-plugin-broken failed plugin skipped: missing "provider"`,
		"kite skipped cannot stat", // its skill file s.mjs does not exist: the skills loader says so
		`ev failed plugin skipped: the config already declares provider "ev"`,
		"off skipped plugin disabled",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor lines lack %q:\n%s", want, got)
		}
	}
}

type echoIn struct {
	Text string `json:"text"`
}

// TestMCPUpstreamThroughTheRuntime serves an in-process Streamable HTTP
// upstream through the whole runtime (config, registry, pipeline, facade).
func TestMCPUpstreamThroughTheRuntime(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the tool-list cache
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	sdk.AddTool(up, &sdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	sdk.AddTool(up, &sdk.Tool{Name: "wipe", Description: "Wipe everything."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "wiped"}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	defer ts.Close()

	dir := t.TempDir()
	cfg := "mode: flat\nlocal:\n  enabled: false\naudit:\n  path: \"off\"\nproviders:\n  - id: ev\n    kind: mcp\n    url: " + ts.URL + "\n    readonly: [echo]\n"
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := New(ctx, Options{ProjectDir: dir, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := a.Facade.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "ev_echo") || !strings.Contains(got, "ev_wipe") {
		t.Fatalf("tools = %s", got)
	}
	call := func(name string, args map[string]any) string {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return r.Content[0].(*sdk.TextContent).Text
	}
	if got := call("ev_echo", map[string]any{"text": "hello"}); got != "hello" {
		t.Errorf("ev_echo = %q", got)
	}
	// Not in readonly: the runtime asks for confirmation; annotations are not trusted.
	if got := call("ev_wipe", map[string]any{}); !strings.Contains(got, "CONFIRMATION_REQUIRED") {
		t.Errorf("ev_wipe without confirm = %q", got)
	}
	var upstream string
	for _, d := range a.Diagnostics() {
		if d.Provider == "ev" && d.Item == "upstream" {
			upstream = d.Status + " " + d.Reason
		}
	}
	if !strings.HasPrefix(upstream, "ok running (http ") {
		t.Errorf("doctor: %q", upstream)
	}
}
