//go:build unix

package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

type fixture struct {
	p       *Provider
	dir     string // .agents/tools
	project string
	log     *testutil.SyncBuffer
}

var baseEnv = []string{
	"PATH=/usr/bin:/bin", "HOME=/nonexistent", "INHERITED=yes",
	"OCTOMIND_PARAM_STALE=leak", "AGENT_TOOLS_PARAM_STALE=leak", "AGENT_TOOLS_TOOL_NAME=stale", "PWD=/wrong",
}

func newFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(project, ".agents", "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := &testutil.SyncBuffer{}
	opts := Options{
		Dir:        dir,
		ProjectDir: project,
		Logger:     slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Environ:    func() []string { return append([]string(nil), baseEnv...) },
	}
	if mod != nil {
		mod(&opts)
	}
	p := New(opts)
	t.Cleanup(func() { p.Close() })
	return &fixture{p: p, dir: dir, project: project, log: log}
}

// write writes a file in place (same inode when it exists).
func (f *fixture) write(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // WriteFile keeps the mode of an existing file
		t.Fatal(err)
	}
	return p
}

func (f *fixture) tools(t *testing.T) map[string]catalog.Tool {
	t.Helper()
	list, err := f.p.Tools(context.Background())
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	m := map[string]catalog.Tool{}
	for i, tl := range list {
		if i > 0 && list[i-1].Name >= tl.Name {
			t.Errorf("tools not sorted: %q before %q", list[i-1].Name, tl.Name)
		}
		m[tl.Name] = tl
	}
	return m
}

func (f *fixture) call(t *testing.T, name, args string) (*provider.Result, error) {
	t.Helper()
	return f.p.Call(context.Background(), catalog.Tool{Provider: ID, Name: name}, json.RawMessage(args))
}

func (f *fixture) mustCall(t *testing.T, name, args string) *provider.Result {
	t.Helper()
	res, err := f.call(t, name, args)
	if err != nil {
		t.Fatalf("Call %s: %v", name, err)
	}
	return res
}

func wantCode(t *testing.T, err error, code toolerr.Code) *toolerr.Error {
	t.Helper()
	te, ok := toolerr.As(err)
	if !ok || te.Code != code {
		t.Fatalf("want %s error, got %v", code, err)
	}
	return te
}

func TestInfo(t *testing.T) {
	f := newFixture(t, nil)
	got := f.p.Info()
	want := catalog.ProviderInfo{ID: "local", Kind: "local", Description: DefaultDescription, Timeout: 60 * time.Second, HostLocal: true}
	if got != want {
		t.Errorf("got %+v", got)
	}
	f = newFixture(t, func(o *Options) { o.RequireConfirm, o.Description, o.Timeout = true, "Mine", time.Second })
	if got := f.p.Info(); !got.RequireConfirm || got.Description != "Mine" || got.Timeout != time.Second {
		t.Errorf("got %+v", got)
	}
}

func TestToolsAndSafetyClasses(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "branch", "#!/bin/sh\n# @description Print the branch.\n# @readonly\necho main\n", 0o755)
	f.write(t, "release", "#!/bin/sh\n# @description Cut a release.\n# @param *bump string patch|minor|major\n# @confirm\n# @timeout 5m\n", 0o755)
	f.write(t, "test", "#!/bin/sh\n# @description Run tests.\n", 0o755)
	tools := f.tools(t)
	if len(tools) != 3 {
		t.Fatalf("got %v", tools)
	}
	b := tools["branch"]
	if b.Provider != "local" || b.Description != "Print the branch." || !b.ReadOnly || b.Timeout != 0 {
		t.Errorf("branch: %+v", b)
	}
	r := tools["release"]
	if r.ReadOnly || r.Timeout != 5*time.Minute ||
		string(r.InputSchema) != `{"type":"object","properties":{"bump":{"type":"string","description":"patch|minor|major"}},"required":["bump"],"additionalProperties":false}` {
		t.Errorf("release: %+v %s", r, r.InputSchema)
	}
	if !tools["release"].AlwaysConfirm || tools["branch"].AlwaysConfirm || tools["test"].AlwaysConfirm {
		t.Error("@confirm must set AlwaysConfirm on that tool only")
	}
}

func TestCallParamsEnvStdinWorkdir(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "echo", `#!/bin/sh
# @description Echo everything.
# @param *name string Name
# @param flag boolean Flag
# @param off boolean Off
# @param n number Number
# @param count integer Count
# @param tags array Tags
# @param meta object Meta
# @param gone string Null one
echo "stdin=$(cat)"
echo "cwd=$(pwd -P)"
env | grep -E '^(AGENT_TOOLS|OCTOMIND)_|^(INHERITED|PWD)=' | sort
`, 0o755)
	args := `{"name": "a b $HOME ; x", "flag": true, "off": false, "n": 1.5e3, "count": 42,
		"tags": ["x", "y z"], "meta": {"k": [1, 2], "s": "v"}, "gone": null}`
	res := f.mustCall(t, "echo", args)
	if res.IsError {
		t.Fatalf("IsError: %+v", res)
	}
	wd := f.project
	want := "stdin=" + args + "\n" + "cwd=" + wd + "\n" + strings.Join([]string{
		"AGENT_TOOLS_PARAM_COUNT=42",
		"AGENT_TOOLS_PARAM_FLAG=true",
		`AGENT_TOOLS_PARAM_META={"k":[1,2],"s":"v"}`,
		"AGENT_TOOLS_PARAM_N=1.5e3",
		"AGENT_TOOLS_PARAM_NAME=a b $HOME ; x",
		"AGENT_TOOLS_PARAM_OFF=false",
		`AGENT_TOOLS_PARAM_TAGS=["x","y z"]`,
		"AGENT_TOOLS_TOOL_NAME=echo",
		"AGENT_TOOLS_WORKDIR=" + wd,
		"INHERITED=yes",
		"OCTOMIND_PARAM_COUNT=42",
		"OCTOMIND_PARAM_FLAG=true",
		`OCTOMIND_PARAM_META={"k":[1,2],"s":"v"}`,
		"OCTOMIND_PARAM_N=1.5e3",
		"OCTOMIND_PARAM_NAME=a b $HOME ; x",
		"OCTOMIND_PARAM_OFF=false",
		`OCTOMIND_PARAM_TAGS=["x","y z"]`,
		"OCTOMIND_TOOL_NAME=echo",
		"OCTOMIND_WORKDIR=" + wd,
		"PWD=" + wd,
	}, "\n") + "\n"
	if res.Text != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Text, want)
	}

	// No arguments: stdin is {}.
	for _, empty := range []string{"", "null", "  "} {
		res = f.mustCall(t, "echo", empty)
		if !strings.HasPrefix(res.Text, "stdin={}\n") || strings.Contains(res.Text, "PARAM_") {
			t.Errorf("args %q: %q", empty, res.Text)
		}
	}
}

func TestCallRejectsBadArguments(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "t", "#!/bin/sh\n# @description t\necho ran\n", 0o755)
	for _, args := range []string{`[1]`, `"s"`, `{`, `{"a-b": 1}`, `{"a=b": 1}`, `{"x": 1, "X": 2}`, `{"s": "nul\u0000"}`} {
		_, err := f.call(t, "t", args)
		_ = wantCode(t, err, toolerr.InvalidArguments)
	}
}

func TestCallResultShapes(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxOutput = 100 })
	f.write(t, "both", "#!/bin/sh\n# @description b\necho out\necho err >&2\n", 0o755)
	f.write(t, "erronly", "#!/bin/sh\n# @description e\necho err >&2\n", 0o755)
	f.write(t, "fail", "#!/bin/sh\n# @description f\necho partial\necho boom >&2\nexit 3\n", 0o755)
	f.write(t, "silent", "#!/bin/sh\n# @description s\nexit 7\n", 0o755)
	f.write(t, "flood", "#!/bin/sh\n# @description f\nyes | head -c 1000\nyes e | head -c 500 >&2\n", 0o755)
	f.write(t, "bigerr", "#!/bin/sh\n# @description f\nprintf 'é%.0s' $(seq 3000) >&2\nexit 1\n", 0o755)

	if res := f.mustCall(t, "both", ""); res.IsError || res.Text != "out\n[stderr]\nerr\n" {
		t.Errorf("both: %+v", res)
	}
	if res := f.mustCall(t, "erronly", ""); res.IsError || res.Text != "[stderr]\nerr\n" {
		t.Errorf("erronly: %+v", res)
	}
	res := f.mustCall(t, "fail", "")
	if !res.IsError || res.Text != "partial\n[stderr]\nboom\n" ||
		!reflect.DeepEqual(res.Details, map[string]any{"exit_code": 3, "stderr_tail": "boom\n"}) {
		t.Errorf("fail: %+v", res)
	}
	res = f.mustCall(t, "silent", "")
	if !res.IsError || res.Details["exit_code"] != 7 || res.Text != "(no output; exit status 7)" {
		t.Errorf("silent: %+v", res)
	}
	res = f.mustCall(t, "flood", "")
	if want := strings.Repeat("y\n", 50) + "\n[stdout truncated: 900 bytes dropped]\n[stderr]\n" +
		strings.Repeat("e\n", 50) + "\n[stderr truncated: 400 bytes dropped]"; res.Text != want {
		t.Errorf("flood: %q", res.Text)
	}

	f2 := newFixture(t, nil)
	f2.write(t, "bigerr", "#!/bin/sh\n# @description f\nprintf 'é%.0s' $(seq 3000) >&2\nexit 1\n", 0o755)
	res = f2.mustCall(t, "bigerr", "")
	if tail, _ := res.Details["stderr_tail"].(string); tail != strings.Repeat("é", 2000) {
		t.Errorf("stderr_tail: %d runes", len([]rune(tail)))
	}
}

func TestCallTimeoutKillsProcessTree(t *testing.T) {
	f := newFixture(t, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	f.write(t, "hang", "#!/bin/sh\n# @description Hangs.\n# @timeout 300ms\nsleep 1000 &\necho $! > "+pidFile+"\necho working\nwait\n", 0o755)
	start := time.Now()
	_, err := f.call(t, "hang", "")
	te := wantCode(t, err, toolerr.Timeout)
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v", el)
	}
	if !strings.Contains(te.Hint, "@timeout") || !strings.Contains(te.Hint, ".agents/tools/hang") || !strings.Contains(te.Message, "300ms") {
		t.Errorf("message %q hint %q", te.Message, te.Hint)
	}
	if te.Details["stdout_tail"] != "working\n" || te.Details["timeout_ms"] != int64(300) {
		t.Errorf("details %v", te.Details)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	testutil.WaitGone(t, pid)

	// Provider default deadline, no @timeout.
	f = newFixture(t, func(o *Options) { o.Timeout = 200 * time.Millisecond })
	f.write(t, "slow", "#!/bin/sh\n# @description Slow.\nsleep 1000\n", 0o755)
	_, err = f.call(t, "slow", "")
	_ = wantCode(t, err, toolerr.Timeout)

	// A caller's deadline is a timeout too, and still a context error.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = f.p.Call(ctx, catalog.Tool{Name: "slow"}, nil)
	_ = wantCode(t, err, toolerr.Timeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("want DeadlineExceeded in chain: %v", err)
	}

	// Cancellation.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = f.p.Call(ctx, catalog.Tool{Name: "slow"}, nil)
	_ = wantCode(t, err, toolerr.Cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("want Canceled in chain: %v", err)
	}
}

func TestCallStartFailures(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "noshebang", "# @description No shebang.\necho hi\n", 0o755)
	f.write(t, "crlf", "#!/bin/sh\r\n# @description CRLF.\r\necho hi\r\n", 0o755)
	f.write(t, "nointerp", "#!/nonexistent/interp\n# @description Missing interpreter.\n", 0o755)
	for name, hint := range map[string]string{
		"noshebang": "no #! line",
		"crlf":      "carriage return",
		"nointerp":  "/nonexistent/interp",
	} {
		_, err := f.call(t, name, "")
		te := wantCode(t, err, toolerr.BackendError)
		if name == "noshebang" && te.Message != `cannot run local tool "noshebang" (.agents/tools/noshebang): exec format error` {
			t.Errorf("message %q", te.Message)
		}
		if !strings.Contains(te.Hint, hint) {
			t.Errorf("%s: hint %q lacks %q (message %q)", name, te.Hint, hint, te.Message)
		}
	}
}

func TestSkipReasonsAndDiagnostics(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "ok", "#!/bin/sh\n# @description fine\n", 0o755)
	f.write(t, "noexec", "#!/bin/sh\n# @description x\n", 0o644)
	f.write(t, "nodesc", "#!/bin/sh\n# just a comment\necho\n", 0o755)
	f.write(t, "deploy.sh", "#!/bin/sh\n# @description x\n", 0o755)
	f.write(t, "badtype", "#!/bin/sh\n# @description x\n#\n# @param count int How many\n", 0o755)
	f.write(t, ".hidden", "#!/bin/sh\n# @description x\n", 0o755)
	f.write(t, "ok~", "#!/bin/sh\n# @description x\n", 0o755)
	f.write(t, "#ok#", "#!/bin/sh\n# @description x\n", 0o755)
	if err := os.Mkdir(filepath.Join(f.dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.dir, "ok"), filepath.Join(f.dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.dir, "missing"), filepath.Join(f.dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(f.dir, "fifo"), 0o755); err != nil {
		t.Fatal(err)
	}

	tools := f.tools(t)
	if len(tools) != 2 || tools["ok"].Name == "" || tools["linked"].Name == "" {
		t.Errorf("tools: %v", tools)
	}
	got := map[string]string{}
	for _, d := range f.p.Diagnostics() {
		if d.Provider != "local" {
			t.Errorf("provider %q", d.Provider)
		}
		got[d.Item] = d.Status + ": " + d.Reason
	}
	want := map[string]string{
		"ok":        "ok: ",
		"linked":    "ok: ",
		"noexec":    "skipped: not executable: chmod +x .agents/tools/noexec",
		"nodesc":    "skipped: no @description in the leading comment block",
		"deploy.sh": "skipped: file name has a dot: rename to deploy",
		"badtype":   `skipped: line 4: @param "count": unknown type "int" (want string, boolean, integer, number, array or object)`,
		"subdir":    "skipped: is a directory",
		"dangling":  "skipped: broken symbolic link",
		"fifo":      "skipped: not a regular file",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics:\n got  %v\n want %v", got, want)
	}

	// Each reason is logged once, not on every scan.
	f.tools(t)
	f.tools(t)
	logs := f.log.String()
	for item := range want {
		if want[item] == "ok: " {
			continue
		}
		if n := strings.Count(logs, "file="+strconv.Quote(item)) + strings.Count(logs, "file="+item+" "); n != 1 {
			t.Errorf("%s logged %d times:\n%s", item, n, logs)
		}
	}
	if strings.Contains(logs, "hidden") || strings.Contains(logs, "ok~") || strings.Contains(logs, "#ok#") {
		t.Errorf("ignored files must be silent:\n%s", logs)
	}
	// A changed reason is logged again.
	f.write(t, "badtype", "#!/bin/sh\n# @description x\n# @param count integer\n# @bogus\n", 0o755)
	f.tools(t)
	if !strings.Contains(f.log.String(), "unknown tag @bogus") {
		t.Errorf("new reason not logged:\n%s", f.log.String())
	}
	// Calling a skipped script explains why.
	_, err := f.call(t, "noexec", "")
	if te := wantCode(t, err, toolerr.BackendError); !strings.Contains(te.Message, "not executable") {
		t.Errorf("message %q", te.Message)
	}
}

func TestMissingDirectory(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Dir = filepath.Join(o.ProjectDir, "nope", "tools") })
	tools, err := f.p.Tools(context.Background())
	if err != nil || len(tools) != 0 {
		t.Errorf("got %v, %v", tools, err)
	}
	d := f.p.Diagnostics()
	if len(d) != 1 || d[0].Status != "ok" || !strings.Contains(d[0].Reason, "absent") {
		t.Errorf("diagnostics %+v", d)
	}
	_, err = f.call(t, "x", "")
	_ = wantCode(t, err, toolerr.UnknownTool)

	// Created later: picked up without a restart.
	if err := os.MkdirAll(f.p.opts.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f.dir = f.p.opts.Dir
	f.write(t, "late", "#!/bin/sh\n# @description Late.\necho late\n", 0o755)
	if res := f.mustCall(t, "late", ""); res.Text != "late\n" {
		t.Errorf("got %q", res.Text)
	}
}

func TestNotADirectory(t *testing.T) {
	f := newFixture(t, nil)
	file := f.write(t, "file", "x", 0o644)
	p := New(Options{Dir: file, ProjectDir: f.project, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { p.Close() })
	if _, err := p.Tools(context.Background()); err == nil {
		t.Error("want an error")
	}
	if d := p.Diagnostics(); len(d) != 1 || d[0].Status != "failed" {
		t.Errorf("diagnostics %+v", d)
	}
}

func TestCallNameCannotEscapeDirectory(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "ok", "#!/bin/sh\n# @description fine\n", 0o755)
	outside := filepath.Join(f.project, "evil")
	if err := os.WriteFile(outside, []byte("#!/bin/sh\n# @description evil\necho pwned\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../../evil", "..", ".", "", "/bin/sh", "ok/../../../evil", ".hidden"} {
		_, err := f.call(t, name, "")
		_ = wantCode(t, err, toolerr.UnknownTool)
	}
}

func TestHotReload(t *testing.T) {
	f := newFixture(t, nil)
	a := f.write(t, "a", "#!/bin/sh\n# @description Alpha\necho one\n", 0o755)
	if got := f.tools(t); len(got) != 1 || got["a"].Description != "Alpha" {
		t.Fatalf("got %v", got)
	}

	// Add.
	f.write(t, "b", "#!/bin/sh\n# @description Beta\necho b\n", 0o755)
	if got := f.tools(t); len(got) != 2 {
		t.Fatalf("add: got %v", got)
	}

	// Edit in place, same size, mtime bumped explicitly.
	old := time.Now().Add(-time.Hour)
	mustChtimes(t, a, old)
	f.tools(t) // cache a non-racy entry
	f.write(t, "a", "#!/bin/sh\n# @description Omega\necho two\n", 0o755)
	mustChtimes(t, a, old.Add(time.Second))
	if got := f.tools(t); got["a"].Description != "Omega" {
		t.Errorf("same-size edit with new mtime: %q", got["a"].Description)
	}
	if res := f.mustCall(t, "a", ""); res.Text != "two\n" {
		t.Errorf("call after edit: %q", res.Text)
	}

	// Same size and same mtime, but saved by rename (new inode).
	mustChtimes(t, a, old)
	f.tools(t)
	tmp := filepath.Join(f.dir, ".a.tmp")
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\n# @description Gamma\necho six\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustChtimes(t, tmp, old)
	if err := os.Rename(tmp, a); err != nil {
		t.Fatal(err)
	}
	if got := f.tools(t); got["a"].Description != "Gamma" {
		t.Errorf("rename with the same mtime and size: %q", got["a"].Description)
	}

	// Same size, same inode, same (recent) mtime: two writes within one mtime
	// tick. Recently modified files are re-read, so this is seen too.
	now := time.Now()
	f.write(t, "a", "#!/bin/sh\n# @description Delta\necho one\n", 0o755)
	mustChtimes(t, a, now)
	f.tools(t)
	f.write(t, "a", "#!/bin/sh\n# @description Sigma\necho one\n", 0o755)
	mustChtimes(t, a, now)
	if got := f.tools(t); got["a"].Description != "Sigma" {
		t.Errorf("edit within one mtime tick: %q", got["a"].Description)
	}

	// Header change seen by Call without a Tools call in between.
	f.write(t, "b", "#!/bin/sh\n# @description Beta\n# @timeout 100ms\nsleep 1000\n", 0o755)
	_, err := f.call(t, "b", "")
	_ = wantCode(t, err, toolerr.Timeout)
	f.write(t, "b", "#!/bin/sh\n# @description Beta\n# @confirm\n", 0o755)
	if !f.tools(t)["b"].AlwaysConfirm {
		t.Error("@confirm added by an edit not seen")
	}
	// Broken by an edit, then fixed.
	f.write(t, "b", "#!/bin/sh\n# @description Beta\n# @param x int\n", 0o755)
	if got := f.tools(t); len(got) != 1 {
		t.Errorf("broken edit: %v", got)
	}
	f.write(t, "b", "#!/bin/sh\n# @description Beta\n# @param x integer\necho \"x=$AGENT_TOOLS_PARAM_X\"\n", 0o755)
	if res := f.mustCall(t, "b", `{"x": 5}`); res.Text != "x=5\n" {
		t.Errorf("fixed: %q", res.Text)
	}

	// chmod -x removes it; chmod +x brings it back.
	if err := os.Chmod(a, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := f.tools(t); len(got) != 1 {
		t.Errorf("chmod -x: %v", got)
	}
	if err := os.Chmod(a, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := f.tools(t); len(got) != 2 {
		t.Errorf("chmod +x: %v", got)
	}

	// Delete.
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if got := f.tools(t); len(got) != 1 || got["b"].Name == "" {
		t.Errorf("delete: %v", got)
	}
	_, err = f.call(t, "a", "")
	_ = wantCode(t, err, toolerr.UnknownTool)
}

func mustChtimes(t *testing.T, p string, tm time.Time) {
	t.Helper()
	if err := os.Chtimes(p, tm, tm); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentToolsAndCalls(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "echo", "#!/bin/sh\n# @description Echo.\n# @param *v integer V\necho \"$AGENT_TOOLS_PARAM_V\"\n", 0o755)
	f.write(t, "churn", "#!/bin/sh\n# @description v0\n", 0o755)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if _, err := f.p.Tools(context.Background()); err != nil {
					errs <- err
					return
				}
				v := g*100 + i
				res, err := f.p.Call(context.Background(), catalog.Tool{Name: "echo"}, json.RawMessage(fmt.Sprintf(`{"v":%d}`, v)))
				if err != nil {
					errs <- err
					return
				}
				if res.Text != fmt.Sprintf("%d\n", v) {
					errs <- fmt.Errorf("got %q for %d", res.Text, v)
					return
				}
				f.p.Diagnostics()
			}
		}()
	}
	wg.Add(1)
	go func() { // edits and calls another script meanwhile
		defer wg.Done()
		for i := 0; i < 20; i++ {
			p := filepath.Join(f.dir, "churn")
			if err := os.WriteFile(p, []byte(fmt.Sprintf("#!/bin/sh\n# @description v%d\necho %d\n", i, i)), 0o755); err != nil {
				errs <- err
				return
			}
			if _, err := f.p.Call(context.Background(), catalog.Tool{Name: "churn"}, nil); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEnvironOverridesAndDefaults(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Environ = nil })
	t.Setenv("AGENT_TOOLS_TEST_SECRET", "from-host")
	f.write(t, "sec", "#!/bin/sh\n# @description s\necho \"$AGENT_TOOLS_TEST_SECRET\"\n", 0o755)
	if res := f.mustCall(t, "sec", ""); res.Text != "from-host\n" {
		t.Errorf("scripts must inherit the runtime environment: %q", res.Text)
	}
}

func TestHelpers(t *testing.T) {
	for in, want := range map[string]string{"deploy.sh": "deploy", "my.tool.py": "my_tool", "x.": "x"} {
		if got := dotless(in); got != want {
			t.Errorf("dotless(%q) = %q, want %q", in, got, want)
		}
	}
}
