package app_test

import (
	"bytes"
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/pipeline"

	"github.com/agent-tools/agent-tools/internal/app"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// watched builds the runtime for dir, starts its watcher and connects a
// client that counts list_changed notifications.
func watched(t *testing.T, dir string) (*app.App, *sdk.ClientSession, chan struct{}, *syncBuf) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logs := &syncBuf{}
	a, err := app.New(ctx, app.Options{ProjectDir: dir, AuditDefault: io.Discard, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if err := a.Watch(ctx, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 16)
	ct, st := sdk.NewInMemoryTransports()
	if _, err := a.Facade.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return a, cs, changed, logs
}

func liveToolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	sort.Strings(out)
	return out
}

func has(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

func waitChanged(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("no list_changed after %s", what)
	}
}

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

const hiScript = "#!/bin/sh\n# @description Say hi\n# @readonly\necho hi\n"

// TestWatchScripts: adding and removing a script (even creating
// .agents/tools itself after start) reaches connected sessions as
// list_changed, without any request from them.
func TestWatchScripts(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "agent-tools.yaml"), "mode: flat\n", 0o644)
	_, cs, changed, _ := watched(t, dir)
	if got := liveToolNames(t, cs); !has(got, "runtime_status") || has(got, "hi") {
		t.Fatalf("start: %v", got)
	}
	writeFile(t, filepath.Join(dir, ".agents", "tools", "hi"), hiScript, 0o755)
	waitChanged(t, changed, "adding a script")
	if got := liveToolNames(t, cs); !has(got, "hi") {
		t.Fatalf("after add: %v", got)
	}
	if err := os.Remove(filepath.Join(dir, ".agents", "tools", "hi")); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, changed, "removing a script")
	if got := liveToolNames(t, cs); has(got, "hi") || !has(got, "runtime_status") {
		t.Fatalf("after remove: %v", got)
	}
}

// TestWatchConfig: a broken config keeps the last good runtime (and says
// why); a good edit swaps the runtime under the connected session, which
// gets list_changed and can call the new tools.
func TestWatchConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent-tools.yaml")
	writeFile(t, cfg, "mode: flat\nlocal:\n  enabled: false\n", 0o644)
	writeFile(t, filepath.Join(dir, ".agents", "tools", "hi"), hiScript, 0o755)
	a, cs, changed, logs := watched(t, dir)
	if got := liveToolNames(t, cs); !has(got, "runtime_status") || has(got, "hi") {
		t.Fatalf("start: %v", got)
	}
	boot := a.Registry()

	writeFile(t, cfg, "mode: flat\nlocal:\n  enabled: nope\n", 0o644)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "config change not applied") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if l := logs.String(); !strings.Contains(l, "agent-tools.yaml:3:12: local.enabled: want true or false") {
		t.Fatalf("broken config not explained:\n%s", l)
	}
	if a.Registry() != boot {
		t.Fatal("a broken config replaced the runtime")
	}
	if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "runtime_status"}); err != nil || res.IsError {
		t.Fatalf("serving after a broken config: %v %+v", err, res)
	}

	writeFile(t, cfg, "mode: flat\nlocal:\n  enabled: true\n", 0o644)
	waitChanged(t, changed, "a good config edit")
	if got := liveToolNames(t, cs); !has(got, "hi") {
		t.Fatalf("after reload: %v", got)
	}
	if a.Registry() == boot || !a.Config().Local.Enabled {
		t.Fatal("runtime not swapped")
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "hi"})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "hi") {
		t.Fatalf("call after reload: %v %+v", err, res)
	}
	if !strings.Contains(logs.String(), "configuration reloaded") {
		t.Errorf("reload not logged:\n%s", logs.String())
	}

	// A mode change cannot be applied live: it is logged, the mode stays.
	writeFile(t, cfg, "mode: search\nlocal:\n  enabled: true\n", 0o644)
	deadline = time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "restart to apply it") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := liveToolNames(t, cs); !has(got, "hi") || has(got, "agent_tools_search") {
		t.Fatalf("mode changed live: %v\n%s", got, logs.String())
	}
}

// A config deleted or renamed while serving keeps the last good one, loudly:
// it used to switch silently to zero-config, making denied tools callable.
func TestDeletedConfigKeepsLastGood(t *testing.T) {
	for _, how := range []string{"delete", "rename"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "agent-tools.yaml")
			writeFile(t, cfg, "mode: flat\npolicy:\n  deny: [runtime_status]\n", 0o644)
			logs := &syncBuf{}
			a, err := app.New(context.Background(), app.Options{ProjectDir: dir, AuditDefault: io.Discard, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			boot := a.Registry()
			if how == "delete" {
				err = os.Remove(cfg)
			} else {
				err = os.Rename(cfg, cfg+".bak")
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "deleted or renamed") {
				t.Fatalf("Reload = %v", err)
			}
			if a.Registry() != boot || a.Config().Path != cfg {
				t.Fatal("the runtime switched away from the last good config")
			}
			if resp := a.Call(context.Background(), &pipeline.Request{Tool: "runtime_status"}); resp.Err == nil || resp.Err.Code != "UNKNOWN_TOOL" {
				t.Fatalf("the policy was dropped: %+v", resp.Err)
			}
			if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "deleted or renamed") {
				t.Errorf("not loud:\n%s", l)
			}
			writeFile(t, cfg, "mode: flat\n", 0o644)
			if err := a.Reload(context.Background()); err != nil || a.Registry() == boot {
				t.Fatalf("the restored file is not picked up: %v", err)
			}
		})
	}
}

// TestReloadExplicit: Reload reports a broken config as an error.
func TestReloadExplicit(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent-tools.yaml")
	writeFile(t, cfg, "mode: flat\n", 0o644)
	a, err := app.New(context.Background(), app.Options{ProjectDir: dir, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	writeFile(t, cfg, "mode: [\n", 0o644)
	if err := a.Reload(context.Background()); err == nil {
		t.Fatal("broken config reloaded")
	}
	writeFile(t, cfg, "mode: flat\npolicy:\n  deny: [runtime_status]\n", 0o644)
	if err := a.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Listings and calls use the new rules at once.
	if names := a.Facade.Tools(); slices.ContainsFunc(names, func(t *sdk.Tool) bool { return t.Name == "runtime_status" }) {
		t.Fatal("a tool denied by the reloaded config is still listed")
	}
	if resp := a.Call(context.Background(), &pipeline.Request{Tool: "runtime_status"}); resp.Err == nil || resp.Err.Code != "UNKNOWN_TOOL" {
		t.Fatalf("denied after reload: %+v", resp.Err)
	}
	res, err := func() (*sdk.CallToolResult, error) {
		ct, st := sdk.NewInMemoryTransports()
		if _, err := a.Facade.Server().Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		return cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "runtime_status"})
	}()
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "UNKNOWN_TOOL") {
		t.Fatalf("an unlisted tool called over MCP: %v %+v", err, res)
	}
}
