package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/status"
)

// A provider the config declares disabled is built, so SetEnabled can turn
// it on; one with unresolved ${VAR}s cannot be, and says why; the choices
// survive a reload; Status reports all of it.
func TestEnabledSetOwnedByTheApp(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	sdk.AddTool(up, &sdk.Tool{Name: "echo", Description: "Echo."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return up }, nil))
	defer ts.Close()
	dir := t.TempDir()
	cfg := "mode: flat\nlocal: {enabled: false}\naudit: {path: \"off\"}\nproviders:\n" +
		"  - {id: ev, kind: mcp, enabled: false, url: " + ts.URL + ", readonly: [echo]}\n" +
		"  - {id: sec, kind: mcp, enabled: false, url: \"https://example.invalid/${AT_UNSET_HOST}\"}\n"
	path := filepath.Join(dir, "agent-tools.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := New(ctx, Options{ProjectDir: dir, AuditDefault: io.Discard, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	has := func(name string) bool { _, ok := a.Registry().Lookup(name); return ok }
	if has("ev_echo") {
		t.Fatal("ev is declared disabled")
	}
	if err := a.SetEnabled(ctx, "ev", true); err != nil {
		t.Fatal(err)
	}
	if !has("ev_echo") {
		t.Fatal("enabling ev must load its tools")
	}
	var ue *UnavailableError
	if err := a.SetEnabled(ctx, "sec", true); !errors.As(err, &ue) || !strings.Contains(ue.Reason, "AT_UNSET_HOST") {
		t.Fatalf("sec: %v", err)
	}
	if err := a.SetEnabled(ctx, "nope", true); !errors.Is(err, status.ErrUnknownProvider) {
		t.Fatalf("nope: %v", err)
	}
	if err := a.SetEnabled(ctx, "builtin", false); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if !has("ev_echo") || has("runtime_status") {
		t.Fatalf("a reload must keep the run-time choices: ev_echo %v runtime_status %v", has("ev_echo"), has("runtime_status"))
	}
	st := a.Status()
	got := map[string]status.ProviderState{}
	for _, p := range st.Providers {
		got[p.ID] = p
	}
	if !got["ev"].Enabled || got["ev"].Tools != 1 || got["builtin"].Enabled || !strings.Contains(got["sec"].Unavailable, "AT_UNSET_HOST") {
		t.Fatalf("status: %+v", st.Providers)
	}
	// The disabled-and-unbuildable provider is a note for doctor, not a failure.
	for _, d := range a.Diagnostics() {
		if d.Provider == "sec" && d.Status == "failed" {
			t.Fatalf("doctor fails on a disabled provider: %+v", d)
		}
	}
	// After a disable, a call by name says the provider is off.
	if err := a.SetEnabled(ctx, "ev", false); err != nil {
		t.Fatal(err)
	}
	resp := a.Call(ctx, &pipeline.Request{Tool: "ev_echo", Args: []byte(`{"text":"x"}`)})
	if resp.Err == nil || resp.Err.Code != "PROVIDER_UNAVAILABLE" {
		t.Fatalf("call after disable: %+v", resp.Err)
	}
	// Every front door outside MCP builds its request through the facade
	// (whose miss teaching must not turn the switched-off tool into an
	// UNKNOWN_TOOL), and the answer says why: disabled.
	for _, via := range []string{"cli", "in-process"} {
		resp := a.Call(ctx, a.Facade.Request(facade.Caller{Via: via, Tool: "ev_echo", Args: []byte(`{"text":"x"}`)}))
		if resp.Err == nil || resp.Err.Code != "PROVIDER_UNAVAILABLE" || !strings.Contains(resp.Err.Message, "disabled") {
			t.Fatalf("%s call after disable: %+v", via, resp.Err)
		}
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	resp = a.Call(ctx, &pipeline.Request{Tool: "ev_echo", Args: []byte(`{"text":"y"}`)})
	if resp.Err == nil || resp.Err.Code != "PROVIDER_UNAVAILABLE" {
		t.Fatalf("call after disable and reload: %+v", resp.Err)
	}
}
