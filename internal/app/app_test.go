package app_test

import (
	"context"
	"encoding/json"
	"errors"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

type project struct {
	dir string
}

func newProject(t *testing.T) *project {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".agents", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &project{dir: dir}
}

func (p *project) script(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, ".agents", "tools", name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (p *project) file(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// connect builds the runtime for the project and connects an MCP client to it.
func (p *project) connect(t *testing.T, mode string, opts *sdk.ClientOptions) (*app.App, *sdk.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, err := app.New(ctx, app.Options{ProjectDir: p.dir, Mode: mode, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ct, st := sdk.NewInMemoryTransports()
	ss, err := a.Facade.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return a, cs
}

func toolNames(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

func text(res *sdk.CallToolResult) string { return res.Content[0].(*sdk.TextContent).Text }

func TestHotReloadWithoutRestart(t *testing.T) {
	p := newProject(t)
	p.script(t, "one", "#!/bin/sh\n# @description First tool.\n# @readonly\necho one\n")
	changed := make(chan struct{}, 8)
	_, cs := p.connect(t, "flat", &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if got := toolNames(t, cs); got != "execute_javascript,one,runtime_status" {
		t.Fatalf("tools = %s", got)
	}
	p.script(t, "two", "#!/bin/sh\n# @description Second tool.\n# @readonly\necho two\n")
	if got := toolNames(t, cs); got != "execute_javascript,one,runtime_status,two" {
		t.Fatalf("a script saved while serving is not listed: %s", got)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed after a new script")
	}
	// Edit, save, call: the new body runs at once.
	p.script(t, "one", "#!/bin/sh\n# @description First tool, edited.\n# @readonly\necho edited\n")
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "one"})
	if err != nil || text(res) != "edited\n" {
		t.Fatalf("edited script = %v %v", res, err)
	}
}

func TestTimeoutAndCancelKillTheScript(t *testing.T) {
	p := newProject(t)
	p.script(t, "slow", "#!/bin/sh\n# @description Sleeps.\n# @readonly\n# @timeout 200ms\necho $$ > \"$AGENT_TOOLS_WORKDIR/pid\"\nexec sleep 1000\n")
	p.script(t, "hang", "#!/bin/sh\n# @description Hangs until cancelled.\n# @readonly\necho $$ > \"$AGENT_TOOLS_WORKDIR/pid2\"\nexec sleep 1000\n")
	_, cs := p.connect(t, "", nil)

	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "agent_tools_local_call", Arguments: map[string]any{"toolName": "slow"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), `"code":"TIMEOUT"`) {
		t.Fatalf("timeout = %v %v", res, err)
	}
	assertGone(t, p.dir+"/pid")

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "agent_tools_local_call", Arguments: map[string]any{"toolName": "hang"}})
		errc <- err
	}()
	pid := waitPID(t, p.dir+"/pid2")
	cancel() // the client sends notifications/cancelled
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error = %v", err)
	}
	assertGoneEventually(t, pid)
}

func waitPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		time.Sleep(5 * time.Millisecond) // polling a file the child writes: no signal exists
	}
	t.Fatalf("%s never written", path)
	return 0
}

func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	assertGoneEventually(t, waitPID(t, pidFile))
}

// assertGoneEventually waits (bounded) until pid no longer exists.
func assertGoneEventually(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d still alive", pid)
}

func TestConfigAndAudit(t *testing.T) {
	p := newProject(t)
	p.script(t, "write", "#!/bin/sh\n# @description Writes.\necho wrote\n")
	p.file(t, "agent-tools.yaml", "mode: search\nlocal:\n  requireConfirm: false\naudit:\n  path: audit.jsonl\npolicy:\n  deny: [\"runtime_*\"]\n")
	a, cs := p.connect(t, "", nil)
	if a.Mode != "search" {
		t.Fatalf("mode = %s", a.Mode)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "agent_tools_call", Arguments: map[string]any{"tool": "write"}})
	if err != nil || res.IsError || text(res) != "wrote\n" {
		t.Fatalf("requireConfirm: false must let it run: %v %v", res, err)
	}
	res, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "agent_tools_call", Arguments: map[string]any{"tool": "runtime_status"}})
	if !res.IsError || !strings.Contains(text(res), "UNKNOWN_TOOL") { // hidden: answered as a tool that does not exist
		t.Fatalf("deny rule ignored: %s", text(res))
	}
	a.Close() // writes the buffered audit lines (auditbuf.go)
	b, err := os.ReadFile(filepath.Join(p.dir, "audit.jsonl"))
	if err != nil || strings.Count(string(b), "\n") != 2 || !strings.Contains(string(b), `"tool":"write"`) {
		t.Fatalf("audit = %s %v", b, err)
	}
}

func TestBadConfigIsAConfigError(t *testing.T) {
	p := newProject(t)
	p.file(t, "agent-tools.yaml", "mode: sideways\n")
	_, err := app.New(context.Background(), app.Options{ProjectDir: p.dir})
	var ce *app.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "agent-tools.yaml:1:7") {
		t.Fatalf("err = %v", err)
	}
}

func TestPromptsServed(t *testing.T) {
	p := newProject(t)
	if err := os.MkdirAll(filepath.Join(p.dir, ".agents", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.file(t, ".agents/prompts/review.md", "---\ndescription: Review a path.\narguments:\n  - name: path\n    required: true\n---\nReview {{path}} carefully.\n")
	p.file(t, ".agents/prompts/broken.md", "---\nname: [\n---\nx\n")
	a, cs := p.connect(t, "", nil)
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(res.Prompts) != 1 || res.Prompts[0].Name != "review" || !res.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts = %+v %v", res, err)
	}
	got, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "review", Arguments: map[string]string{"path": "main.go"}})
	if err != nil || got.Messages[0].Content.(*sdk.TextContent).Text != "Review main.go carefully." {
		t.Fatalf("get = %+v %v", got, err)
	}
	if _, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "review"}); err == nil || !strings.Contains(err.Error(), "needs argument(s): path") {
		t.Fatalf("missing argument: %v", err)
	}
	var skipped, served bool
	for _, d := range a.Diagnostics() {
		skipped = skipped || (d.Provider == "prompts" && d.Item == "broken.md" && d.Status == "skipped")
		served = served || (d.Provider == "prompts" && d.Item == "review" && d.Status == "ok" && strings.Contains(d.Reason, "Review a path."))
	}
	if !skipped || !served {
		t.Fatalf("doctor lists the broken prompt: %v, the served one: %v", skipped, served)
	}
	// Saved while serving: listed at the next prompts/list.
	p.file(t, ".agents/prompts/ship.md", "Ship it.")
	if res, _ := cs.ListPrompts(context.Background(), nil); len(res.Prompts) != 2 {
		t.Fatalf("new prompt not listed: %+v", res.Prompts)
	}
}

// promptUpstream is a provider whose upstream serves prompts.
type promptUpstream struct{}

func (promptUpstream) Info() catalog.ProviderInfo                    { return catalog.ProviderInfo{ID: "up", Kind: "mcp"} }
func (promptUpstream) Tools(context.Context) ([]catalog.Tool, error) { return nil, nil }
func (promptUpstream) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return nil, nil
}
func (promptUpstream) UpstreamPrompts() []*sdk.Prompt {
	return []*sdk.Prompt{{Name: "summarize"}, {Name: "triage"}}
}

// TestDoctorListsUpstreamPrompts: doctor covers every prompt, the
// upstreams' included.
func TestDoctorListsUpstreamPrompts(t *testing.T) {
	a, err := app.New(context.Background(), app.Options{ProjectDir: t.TempDir(), AuditDefault: io.Discard, Providers: []provider.Provider{promptUpstream{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, d := range a.Diagnostics() {
		if d.Provider == "up" && d.Item == "prompts" && d.Status == "ok" && strings.Contains(d.Reason, "2 upstream prompts served: summarize, triage") {
			return
		}
	}
	t.Fatalf("doctor: %+v", a.Diagnostics())
}
