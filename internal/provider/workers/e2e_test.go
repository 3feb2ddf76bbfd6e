package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
)

type progressLog struct {
	mu   sync.Mutex
	msgs map[string][]string // token → messages
	seen chan string         // token of every notification
}

func (l *progressLog) handle(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	tok := fmt.Sprint(req.Params.ProgressToken)
	l.mu.Lock()
	l.msgs[tok] = append(l.msgs[tok], req.Params.Message)
	l.mu.Unlock()
	select {
	case l.seen <- tok:
	default:
	}
}

// waitFor returns tok's messages once one contains sub (or ctx ends).
func (l *progressLog) waitFor(ctx context.Context, tok, sub string) []string {
	for {
		msgs := l.of(tok)
		if slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, sub) }) {
			return msgs
		}
		select {
		case <-l.seen:
		case <-ctx.Done():
			return msgs
		}
	}
}

func (l *progressLog) of(tok string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs[tok])
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestEndToEndFromAnMCPClient is the "done when": a real MCP client
// calls agent_tools_codex_call {toolName: "run"} against the runtime.
func TestEndToEndFromAnMCPClient(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for name, body := range map[string]string{"src/api/api.go": "package api\n", "src/ui/ui.go": "package ui\n", "README.md": "# demo\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "init")
	fakeCodex, _ := filepath.Abs("testdata/fake-codex")
	cfg := fmt.Sprintf("providers:\n  - id: codex\n    kind: workers\n    preset: codex\n    command: %s\n    timeout: 2m\n    isolation: worktree\n    verify: [\"test -f src/api/retry_test.go\", \"true\"]\n", fakeCodex)
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "agent-tools.yaml")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "config")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: dir, Mode: "progressive", AuditDefault: io.Discard})
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
	prog := &progressLog{msgs: map[string][]string{}, seen: make(chan string, 64)}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, &sdk.ClientOptions{ProgressNotificationHandler: prog.handle}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	run := func(token string, args map[string]any, confirm bool) (map[string]any, bool) {
		params := &sdk.CallToolParams{Name: "agent_tools_codex_call", Arguments: map[string]any{"toolName": "run", "arguments": args, "confirm": confirm}}
		if token != "" {
			params.Meta = sdk.Meta{"progressToken": token}
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Errorf("call: %v", err)
			return nil, true
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &body); err != nil {
			t.Errorf("result is not JSON: %v\n%s", err, res.Content[0].(*sdk.TextContent).Text)
		}
		return body, res.IsError
	}
	errCode := func(body map[string]any) string {
		e, _ := body["error"].(map[string]any)
		s, _ := e["code"].(string)
		return s
	}
	implement := map[string]any{
		"goal": "fake:write=src/api/retry.go fake:write=README.md", "mode": "implement",
		"allowed_paths": []string{"src/api"}, "verify_commands": []string{"test -f src/api/retry_test.go"},
	}

	// 1. implement needs confirmation; analyze does not.
	body, isErr := run("", implement, false)
	if !isErr || errCode(body) != "CONFIRMATION_REQUIRED" {
		t.Fatalf("unconfirmed implement: %v", body)
	}
	// A verification command the config does not list needs a person, and
	// this client cannot ask one: the agent's confirm does not count.
	unlisted := map[string]any{"goal": "g", "mode": "implement", "allowed_paths": []string{"src/api"},
		"verify_commands": []string{"python3 -c 'print(1)'"}}
	if body, isErr := run("", unlisted, true); !isErr || errCode(body) != "DENIED" || !strings.Contains(fmt.Sprint(body), "verify_commands") {
		t.Fatalf("unlisted verify command: %v", body)
	}
	// An invalid call is invalid before anyone is asked to confirm it.
	if body, isErr := run("", map[string]any{"goal": "g", "mode": "implement"}, false); !isErr || errCode(body) != "INVALID_ARGUMENTS" {
		t.Fatalf("implement without allowed_paths: %v", body)
	}
	body, isErr = run("", map[string]any{"goal": "Explain src/api", "mode": "analyze"}, false)
	if isErr || body["status"] != "success" {
		t.Fatalf("analyze without confirm: %v", body)
	}

	// 2. Confirmed: progress, attribution from git, the lie caught by verification.
	body, isErr = run("job1", implement, true)
	if isErr {
		t.Fatalf("implement: %v", body)
	}
	if fmt.Sprint(body["files_changed"]) != "[README.md src/api/retry.go]" || fmt.Sprint(body["scope_violations"]) != "[README.md]" {
		t.Errorf("attribution: changed %v violations %v", body["files_changed"], body["scope_violations"])
	}
	if body["status"] != "partial" || body["error_category"] != "verification_failed" || !strings.Contains(fmt.Sprint(body["summary"]), "all tests pass") {
		t.Errorf("the worker's claim outvoted the tests: %v %v", body["status"], body["error_category"])
	}
	// Notifications may be delivered after the result: wait for the last one.
	if msgs := prog.waitFor(ctx, "job1", "exited 0"); len(msgs) < 2 || !strings.Contains(msgs[0], "started") || !strings.Contains(msgs[len(msgs)-1], "exited 0") {
		t.Errorf("progress notifications: %q", msgs)
	}
	git(t, dir, "checkout", "-q", "--", ".")
	git(t, dir, "clean", "-qfd")

	// 3. Two disjoint isolated jobs run concurrently; an overlapping one is refused.
	type out struct {
		body  map[string]any
		isErr bool
	}
	results := make(chan out, 2)
	for i, scope := range []string{"src/api", "src/ui"} {
		go func() {
			b, e := run(fmt.Sprintf("par%d", i), map[string]any{"goal": "fake:sleep=3 fake:write=" + scope + "/new.go", "mode": "implement",
				"allowed_paths": []string{scope}, "verify_commands": []string{"true"}}, true)
			results <- out{b, e}
		}()
	}
	started := map[string]bool{}
	for len(started) < 2 {
		select {
		case tok := <-prog.seen:
			if strings.HasPrefix(tok, "par") {
				started[tok] = true
			}
		case <-ctx.Done():
			t.Fatal("jobs never started")
		}
	}
	body, isErr = run("", map[string]any{"goal": "g", "mode": "implement", "allowed_paths": []string{"src"}}, true)
	if !isErr || errCode(body) != "SCOPE_CONFLICT" {
		t.Fatalf("overlapping job: %v", body)
	}
	holder := fmt.Sprint(body["error"].(map[string]any)["holder"])
	if !strings.HasPrefix(holder, "codex-") {
		t.Errorf("conflict does not name the holder: %v", body)
	}
	// 4. Status (no inference) shows both running jobs and their scopes.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "agent_tools_codex_call", Arguments: map[string]any{"toolName": "status", "arguments": map[string]any{}}})
	if err != nil || res.IsError {
		t.Fatalf("status: %v %v", err, res)
	}
	var status struct {
		Installed  bool                `json:"installed"`
		Auth       string              `json:"auth"`
		ActiveJobs []map[string]any    `json:"active_jobs"`
		Scopes     map[string][]string `json:"write_scopes"`
		Git        map[string]any      `json:"git_verification"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &status); err != nil {
		t.Fatal(err)
	}
	if !status.Installed || status.Auth != "required" || len(status.ActiveJobs) != 2 || len(status.Scopes) != 2 || status.Git["available"] != true {
		t.Errorf("status during two jobs: %+v", status)
	}
	for range 2 {
		r := <-results
		if r.isErr || r.body["status"] != "success" || len(r.body["files_changed"].([]any)) != 1 || len(r.body["scope_violations"].([]any)) != 0 {
			t.Errorf("concurrent job: %v", r.body)
		}
	}
	// While a job ran, progress said what the worker was doing (its events
	// so far), not only how long it had run.
	if msgs := prog.waitFor(ctx, "par0", `last "turn.started"`); !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, `2 events, last "turn.started"`) }) {
		t.Errorf("progress during the job: %q", msgs)
	}
}

// TestMissingBinaryStillLoads: doctor says so, and run answers
// EXECUTABLE_NOT_FOUND through the runtime.
func TestMissingBinaryStillLoads(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte("providers:\n  - id: gem\n    kind: workers\n    preset: gemini\n    command: /no/such/gemini\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: dir, Mode: "flat", AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	found := false
	for _, d := range a.Diagnostics() {
		if d.Provider == "gem" && d.Status == "warning" && strings.Contains(d.Reason, "executable not found") {
			found = true
		}
	}
	if !found {
		t.Fatalf("doctor: %+v", a.Diagnostics())
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, _ := a.Facade.Server().Connect(ctx, st, nil)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "gem_run", Arguments: map[string]any{"goal": "g", "mode": "analyze"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "EXECUTABLE_NOT_FOUND") {
		t.Fatalf("%v %+v", err, res)
	}
}
