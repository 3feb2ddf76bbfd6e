//go:build unix

package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/cli"
)

// hermetic keeps the user's git configuration out of the tests.
const hermetic = `      GIT_CONFIG_NOSYSTEM: "1"
      GIT_CONFIG_GLOBAL: /dev/null
      GIT_AUTHOR_NAME: Test
      GIT_AUTHOR_EMAIL: test@example.com
      GIT_COMMITTER_NAME: Test
      GIT_COMMITTER_EMAIL: test@example.com
`

// repo makes a git repository with two commits in a temporary directory.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	write(t, dir, ".git/info/exclude", "agent-tools.yaml\n")
	write(t, dir, "README.md", "hello\n")
	run("add", "README.md")
	run("commit", "-q", "-m", "first commit")
	write(t, dir, "notes.txt", "one\n")
	run("add", "notes.txt")
	run("commit", "-q", "-m", "second: add notes")
	return dir
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serve starts the runtime on dir (its agent-tools.yaml) and connects an
// MCP client to its facade.
func serve(t *testing.T, dir string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, err := app.New(ctx, app.Options{ProjectDir: dir, AuditDefault: io.Discard})
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
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type reply struct {
	text    string
	isError bool
	code    string
	body    map[string]any
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) reply {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := reply{text: res.Content[0].(*sdk.TextContent).Text, isError: res.IsError}
	if res.IsError {
		var env struct {
			Error map[string]any `json:"error"`
		}
		if json.Unmarshal([]byte(r.text), &env) == nil && env.Error != nil {
			r.body = env.Error
			r.code, _ = env.Error["code"].(string)
		}
	}
	return r
}

const gitConfig = `mode: flat
local: { enabled: false }
audit: { path: "off" }
providers:
  - id: git
    kind: cli
    allow: [git, seq, sleep]
    env:
      GIT_PAGER: cat
` + hermetic + `    tools:
      - name: log
        description: Recent commits, one line each.
        argv: [git, log, --oneline, --no-decorate, "-n", "{count}", "{path}"]
        params:
          count: { type: integer, description: How many, default: 10 }
          path:  { type: string, description: Limit to a path }
        readonly: true
      - name: status
        argv: [git, status, --short]
        readonly: true
      - name: show
        argv: [git, show, --no-patch, "--format=%s", "{rev}"]
        params: { rev: { type: string, default: HEAD } }
        readonly: true
      - name: add
        argv: [git, add, "--", "{paths}"]
        params: { paths: { type: array, required: true } }
      - name: commit
        argv: [git, commit, -q, -m, "{message}", "{all?--all}"]
        params: { message: { type: string, required: true }, all: { type: boolean } }
      - name: grep
        argv: [git, grep, -n, "-e{pattern}", "--", "{paths}"]
        params: { pattern: { type: string, required: true }, paths: { type: array } }
        readonly: true
      - name: big
        argv: [seq, "1", "3000000"]
        readonly: true
      - name: slow
        argv: [sleep, "30"]
        readonly: true
        timeout: 300ms
`

func TestGitThroughTheFacade(t *testing.T) {
	dir := repo(t)
	write(t, dir, "agent-tools.yaml", gitConfig)
	cs := serve(t, dir)

	if r := callTool(t, cs, "git_log", nil); r.isError || !strings.Contains(r.text, "second: add notes") || !strings.Contains(r.text, "first commit") {
		t.Fatalf("log = %+v", r)
	}
	if r := callTool(t, cs, "git_log", map[string]any{"count": 1}); strings.Count(r.text, "\n") != 1 || !strings.Contains(r.text, "second: add notes") {
		t.Errorf("log count=1 = %q", r.text)
	}
	if r := callTool(t, cs, "git_log", map[string]any{"path": "README.md"}); strings.Contains(r.text, "second") || !strings.Contains(r.text, "first commit") {
		t.Errorf("log path=README.md = %q", r.text)
	}
	if r := callTool(t, cs, "git_show", nil); r.text != "second: add notes\n" {
		t.Errorf("show = %q", r.text)
	}
	if r := callTool(t, cs, "git_show", map[string]any{"rev": "HEAD~1"}); r.text != "first commit\n" {
		t.Errorf("show HEAD~1 = %q", r.text)
	}
	// A failing git is a BACKEND_ERROR with its exit code and stderr.
	if r := callTool(t, cs, "git_show", map[string]any{"rev": "no-such-rev"}); r.code != "BACKEND_ERROR" || r.body["exit_code"] != float64(128) ||
		!strings.Contains(r.body["stderr_tail"].(string), "no-such-rev") {
		t.Errorf("show bad rev = %+v", r)
	}

	// Commit needs confirmation; the retry with confirmation commits.
	write(t, dir, "notes.txt", "one\ntwo\n")
	if r := callTool(t, cs, "git_status", nil); r.text != " M notes.txt\n" {
		t.Errorf("status = %q", r.text)
	}
	args := map[string]any{"message": "third: more notes", "all": true}
	r := callTool(t, cs, "git_commit", args)
	if r.code != "CONFIRMATION_REQUIRED" {
		t.Fatalf("commit without confirmation = %+v", r)
	}
	if r := callTool(t, cs, "git_log", nil); strings.Contains(r.text, "third") {
		t.Fatal("commit ran before confirmation")
	}
	args["agent_tools_confirm"] = true
	if r := callTool(t, cs, "git_commit", args); r.isError {
		t.Fatalf("confirmed commit = %+v", r)
	}
	if r := callTool(t, cs, "git_log", map[string]any{"count": 1}); !strings.Contains(r.text, "third: more notes") {
		t.Errorf("log after commit = %q", r.text)
	}
	if r := callTool(t, cs, "git_status", nil); r.text != "" {
		t.Errorf("status after commit = %q", r.text)
	}
}

func TestGitInjection(t *testing.T) {
	dir := repo(t)
	write(t, dir, "agent-tools.yaml", gitConfig)
	cs := serve(t, dir)
	victim := filepath.Join(dir, "victim")
	write(t, dir, "victim", "still here\n")
	confirm := func(m map[string]any) map[string]any { m["agent_tools_confirm"] = true; return m }

	// Shell syntax is text: the whole message is one argument to git.
	msg := "x; rm -rf " + victim + " | $(rm -f " + victim + ") `rm " + victim + "`\nsecond line && echo pwned > " + filepath.Join(dir, "pwned")
	write(t, dir, "notes.txt", "changed\n")
	if r := callTool(t, cs, "git_commit", confirm(map[string]any{"message": msg, "all": true})); r.isError {
		t.Fatalf("commit = %+v", r)
	}
	out, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%B").Output()
	if err != nil || strings.TrimSpace(string(out)) != msg {
		t.Errorf("commit message = %q (%v), want %q", out, err, msg)
	}
	for _, f := range []string{"victim"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s is gone: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a value reached a shell")
	}

	tests := []struct {
		name string
		tool string
		args map[string]any
		code string
		in   string // in the message
	}{
		// The log template has no "--" before {path}: a value that
		// starts with "-" would be an option (--output writes a file).
		{"leading dash as a path", "git_log", map[string]any{"path": "--output=" + filepath.Join(dir, "pwned")}, "INVALID_ARGUMENTS", "does not match pattern"},
		{"leading dash revision", "git_show", map[string]any{"rev": "--output=" + filepath.Join(dir, "pwned")}, "INVALID_ARGUMENTS", "does not match pattern"},
		{"negative count", "git_log", map[string]any{"count": -1}, "INVALID_ARGUMENTS", "minimum"},
		{"option as a message", "git_commit", confirm(map[string]any{"message": "--amend"}), "INVALID_ARGUMENTS", "does not match pattern"},
		{"NUL in a value", "git_show", map[string]any{"rev": "HEAD\x00--output=x"}, "INVALID_ARGUMENTS", "NUL byte"},
		{"newline in a revision is literal", "git_show", map[string]any{"rev": "HEAD\n--output=x"}, "BACKEND_ERROR", "exited with status 128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callTool(t, cs, tt.tool, tt.args)
			if r.code != tt.code || !strings.Contains(r.text, tt.in) {
				t.Errorf("%s(%v) = %s", tt.tool, tt.args, r.text)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("--output reached git as an option")
	}
	// After "--", a value that starts with "-" is a path, safely; and a
	// value attached to its option (-e{pattern}) stays the option's value:
	// the pattern "-rf" is searched for, in a file named "-n".
	write(t, dir, "-n", "uses -rf here\n")
	if err := exec.Command("git", "-C", dir, "add", "--", "-n").Run(); err != nil {
		t.Fatal(err)
	}
	if r := callTool(t, cs, "git_grep", map[string]any{"pattern": "-rf", "paths": []any{"-n"}}); r.text != "-n:1:uses -rf here\n" {
		t.Errorf("grep after -- = %+v", r)
	}
}

func TestTimeoutAndHugeOutput(t *testing.T) {
	dir := repo(t)
	write(t, dir, "agent-tools.yaml", gitConfig)
	cs := serve(t, dir)
	r := callTool(t, cs, "git_slow", nil)
	if ms, _ := r.body["timeout_ms"].(float64); r.code != "TIMEOUT" || ms < 300 || !strings.Contains(r.text, `git tool \"slow\" timed out after 3`) {
		t.Errorf("slow = %+v", r)
	}
	// 3,000,000 lines (~21 MB): the process is capped at 8 MiB per stream,
	// and the result at the runtime's 30,000 characters.
	r = callTool(t, cs, "git_big", nil)
	if r.isError || !strings.HasPrefix(r.text, "1\n2\n3\n") || !strings.Contains(r.text, "[result truncated: showing 30000 of ") || len(r.text) > 31000 {
		t.Errorf("big: isError=%v len=%d tail=%q", r.isError, len(r.text), r.text[max(0, len(r.text)-120):])
	}
}

// TestExamplesLoad loads each cli example with config.Load and builds it
// the way the runtime does; git.yaml also serves a real repository and
// answers log and status, as a newcomer would first try it.
func TestExamplesLoad(t *testing.T) {
	for _, name := range []string{"git.yaml", "gh-cli.yaml"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "..", "examples", name)
			cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			built := 0
			for _, pc := range cfg.Providers {
				if pc.Kind != cli.Name {
					continue
				}
				p, err := cli.Build(provider.HeaderOf(pc), pc.Spec, provider.Deps{ConfigDir: cfg.Dir, ProjectDir: cfg.Dir})
				if err != nil {
					t.Fatalf("build %s: %v", pc.ID, err)
				}
				tools, err := p.Tools(context.Background())
				if err != nil || len(tools) < 5 {
					t.Fatalf("%s: %d tools, %v", pc.ID, len(tools), err)
				}
				built++
			}
			if built == 0 {
				t.Fatal("no cli provider in the example")
			}
		})
	}
	dir := repo(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "git.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "agent-tools.yaml", strings.Replace(string(src), "      GIT_PAGER: cat\n", "      GIT_PAGER: cat\n"+hermetic, 1)+"mode: flat\n")
	cs := serve(t, dir)
	if r := callTool(t, cs, "git_log", map[string]any{"count": 1}); r.isError || !strings.Contains(r.text, "second: add notes") {
		t.Errorf("example log = %+v", r)
	}
	if r := callTool(t, cs, "git_status", nil); r.isError || !strings.HasPrefix(r.text, "## main") {
		t.Errorf("example status = %+v", r)
	}
	write(t, dir, "new.txt", "x\n")
	if r := callTool(t, cs, "git_add", map[string]any{"paths": []any{"new.txt"}, "agent_tools_confirm": true}); r.isError {
		t.Errorf("example add = %+v", r)
	}
	if r := callTool(t, cs, "git_commit", map[string]any{"message": "- a list item as the message", "agent_tools_confirm": true}); r.isError {
		t.Errorf("example commit = %+v", r)
	}
	if r := callTool(t, cs, "git_show", nil); !strings.Contains(r.text, "- a list item as the message") || !strings.Contains(r.text, "new.txt") {
		t.Errorf("example show = %+v", r)
	}
}

// TestGhCliExampleArgv runs examples/gh-cli.yaml against a stand-in gh
// that prints its arguments, one per line: the exact command lines a real
// gh would get.
func TestGhCliExampleArgv(t *testing.T) {
	bin := t.TempDir()
	write(t, bin, "gh", "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n[ \"$GH_PROMPT_DISABLED\" = 1 ] || echo 'prompts enabled' >&2\n")
	if err := os.Chmod(filepath.Join(bin, "gh"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cfg, err := config.Load(filepath.Join("..", "..", "..", "examples", "gh-cli.yaml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := cli.Build(provider.HeaderOf(cfg.Providers[0]), cfg.Providers[0].Spec, provider.Deps{ConfigDir: cfg.Dir})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, args string
		want       []string
	}{
		{"issue_list", `{"repo":"cli/cli"}`, []string{"issue", "list", "--repo=cli/cli", "--state=open", "--limit=30", "--json", "number,title,state,author,labels,updatedAt,url"}},
		{"issue_list", `{"repo":"cli/cli","state":"closed","label":"bug","search":"crash in:title","limit":5}`,
			[]string{"issue", "list", "--repo=cli/cli", "--state=closed", "--limit=5", "--label=bug", "--search=crash in:title", "--json", "number,title,state,author,labels,updatedAt,url"}},
		{"repo_view", `{"repo":"cli/cli"}`, []string{"repo", "view", "cli/cli", "--json", "name,owner,description,stargazerCount,defaultBranchRef,isPrivate,url"}},
		{"search_repos", `{"query":"mcp -topic:archived language:go"}`, []string{"search", "repos", "--limit=10", "--json", "fullName,description,stargazersCount,url", "--", "mcp -topic:archived language:go"}},
		{"issue_comment", `{"repo":"o/r","number":12,"body":"$(rm -rf ~) thanks; | x"}`, []string{"issue", "comment", "12", "--repo=o/r", "--body=$(rm -rf ~) thanks; | x"}},
		{"issue_create", `{"repo":"o/r","title":"-x crash","body":"- item\n- item"}`, []string{"issue", "create", "--repo=o/r", "--title=-x crash", "--body=- item\n- item"}},
	}
	for _, tt := range tests {
		res, err := p.Call(context.Background(), catalog.Tool{Name: tt.tool}, json.RawMessage(tt.args))
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", tt.tool, res, err)
		}
		if want := strings.Join(tt.want, "\n") + "\n"; res.Text != want {
			t.Errorf("%s(%s):\n%s\nwant\n%s", tt.tool, tt.args, res.Text, want)
		}
	}
	// A repository that looks like an option never reaches gh.
	if _, err := p.Call(context.Background(), catalog.Tool{Name: "repo_view"}, json.RawMessage(`{"repo":"--web"}`)); err == nil {
		t.Error("repo_view --web was run")
	}
}
