package workers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestEveryPresetRunsAnalyze(t *testing.T) {
	for _, name := range []string{"codex", "claude", "gemini", "agy"} {
		t.Run(name, func(t *testing.T) {
			root := newRepo(t, map[string]string{"src/a.go": "package a\n"})
			p := newProvider(t, name, root)
			r, te := call(t, p, map[string]any{"goal": "Explain src/a.go", "mode": "analyze", "relevant_files": []string{"src/a.go"}})
			if te != nil {
				t.Fatal(te.JSON())
			}
			if r.Status != "success" || r.Summary == "" || strings.Contains(r.Summary, "PRIVATE REASONING") || len(r.FilesChanged) != 0 {
				t.Fatalf("%+v", r)
			}
			if r.Attribution != "git" {
				t.Fatalf("attribution %q", r.Attribution)
			}
		})
	}
}

func TestReadOnlyCallClassification(t *testing.T) {
	p := newProvider(t, "codex", t.TempDir())
	for mode, ro := range map[string]bool{"analyze": true, "review": true, "implement": false, "": false} {
		if got := p.ReadOnlyCall(tool("run"), json.RawMessage(`{"mode":"`+mode+`"}`)); got != ro {
			t.Errorf("mode %q: read-only %v", mode, got)
		}
	}
	if p.ReadOnlyCall(tool("run"), json.RawMessage(`not json`)) {
		t.Error("malformed arguments classified read-only")
	}
	tools, _ := p.Tools(context.Background())
	if tools[0].Name != "run" || tools[0].ReadOnly || tools[1].Name != "status" || !tools[1].ReadOnly {
		t.Fatalf("tools: %+v", tools)
	}
}

func TestImplementAttribution(t *testing.T) {
	root := newRepo(t, map[string]string{"src/api/a.go": "a\n", "notes.txt": "user notes\n", "src/ui/b.go": "b\n"})
	// Pre-existing dirty state: a user edit the worker leaves alone.
	writeFile(t, root, "notes.txt", "user edit in progress\n")
	p := newProvider(t, "codex", root)
	r, te := call(t, p, map[string]any{
		"goal": "fake:write=src/api/new.go fake:write=src/ui/b.go", "mode": "implement",
		"allowed_paths": []string{"src/api"}, "verify_commands": []string{"true"},
	})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if strings.Join(r.FilesChanged, ",") != "src/api/new.go,src/ui/b.go" {
		t.Errorf("files_changed %v (notes.txt was dirty before and untouched: never blamed)", r.FilesChanged)
	}
	if strings.Join(r.ScopeViolations, ",") != "src/ui/b.go" || r.Status != "partial" || r.ErrorCategory != "scope_violation" {
		t.Errorf("violations %v status %s/%s", r.ScopeViolations, r.Status, r.ErrorCategory)
	}
}

func TestCommitsAreAttributed(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	p := newProvider(t, "codex", root)
	r, te := call(t, p, map[string]any{"goal": "fake:write=src/a.go fake:write=README.md fake:commit", "mode": "implement",
		"allowed_paths": []string{"src"}, "skip_verification": true})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if strings.Join(r.FilesChanged, ",") != "README.md,src/a.go" || strings.Join(r.ScopeViolations, ",") != "README.md" || len(r.Commits) != 1 {
		t.Fatalf("changed %v violations %v commits %v", r.FilesChanged, r.ScopeViolations, r.Commits)
	}
	if !anyContains(r.Warnings, "verification skipped") {
		t.Errorf("skip not reported: %v", r.Warnings)
	}
}

func TestLyingWorkerIsPartial(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	p := newProvider(t, "codex", root)
	r, te := call(t, p, map[string]any{"goal": "fake:write=src/a.go", "mode": "implement", "allowed_paths": []string{"src"},
		"verify_commands": []string{"test -f src/done.marker", "true"}})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if !strings.Contains(r.Summary, "all tests pass") || r.Status != "partial" || r.ErrorCategory != "verification_failed" {
		t.Fatalf("status %s/%s summary %q", r.Status, r.ErrorCategory, r.Summary)
	}
	v := r.Verification
	if len(v) != 2 || v[0].OK || v[0].ExitCode != 1 || !v[1].OK || r.TestResults != "1 of 2 checks passed" {
		t.Fatalf("verification %+v %q", v, r.TestResults)
	}
}

func TestAnalyzeThatWritesIsAViolation(t *testing.T) {
	root := newRepo(t, map[string]string{"a.txt": "a\n"})
	p := newProvider(t, "claude", root)
	r, te := call(t, p, map[string]any{"goal": "fake:write=a.txt", "mode": "review"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if strings.Join(r.ScopeViolations, ",") != "a.txt" || r.Status != "partial" {
		t.Fatalf("%+v", r)
	}
}

func TestOutsideGitIsAWarning(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	p := newProvider(t, "gemini", root)
	r, te := call(t, p, map[string]any{"goal": "fake:write=x.txt", "mode": "implement", "allowed_paths": []string{"."}, "skip_verification": true})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if r.Attribution != "unavailable" || !anyContains(r.Warnings, "not because nothing changed") {
		t.Fatalf("%+v", r)
	}
}

func TestBadInput(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	codexHome := t.TempDir()
	writeFile(t, codexHome, "models_cache.json", `{"fetched_at":"2026-11-30T10:00:00Z","models":[
	  {"slug":"gpt-5.6-sol","supported_reasoning_levels":[{"effort":"low"},{"effort":"high"}]},
	  {"slug":"gpt-5.6-luna","supported_reasoning_levels":[{"effort":"low"}]}]}`)
	withHome := withEnv("CODEX_HOME", codexHome)
	missing := func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Command = "/no/such/codex" }
	routed := func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Models = []string{"gpt-5.6-sol"} }
	tests := []struct {
		name   string
		preset string
		opts   []opt
		args   map[string]any
		code   string
		detail string
	}{
		{"unknown model", "codex", []opt{withHome}, map[string]any{"goal": "g", "mode": "analyze", "model": "gpt-9"}, "REQUESTED_MODEL_UNAVAILABLE", "available_models"},
		{"model not routed", "codex", []opt{withHome, routed}, map[string]any{"goal": "g", "mode": "analyze", "model": "gpt-5.6-luna"}, "REQUESTED_MODEL_UNAVAILABLE", "available_models"},
		{"bad effort for model", "codex", []opt{withHome}, map[string]any{"goal": "g", "mode": "analyze", "model": "gpt-5.6-luna", "effort": "high"}, "INVALID_EFFORT", "supported_efforts"},
		{"bad claude effort", "claude", nil, map[string]any{"goal": "g", "mode": "analyze", "effort": "ultra"}, "INVALID_EFFORT", "supported_efforts"},
		{"gemini has no effort", "gemini", nil, map[string]any{"goal": "g", "mode": "analyze", "effort": "high"}, "INVALID_EFFORT", "supported_efforts"},
		{"escape", "codex", nil, map[string]any{"goal": "g", "mode": "implement", "allowed_paths": []string{"../other"}}, "PATH_OUTSIDE_PROJECT", "path"},
		{"absolute elsewhere", "codex", nil, map[string]any{"goal": "g", "mode": "analyze", "relevant_files": []string{"/etc/passwd"}}, "PATH_OUTSIDE_PROJECT", "field"},
		{"implement without scope", "codex", nil, map[string]any{"goal": "g", "mode": "implement"}, "INVALID_ARGUMENTS", "category"},
		{"shell in verify", "codex", nil, map[string]any{"goal": "g", "mode": "implement", "allowed_paths": []string{"src"}, "verify_commands": []string{"go test && rm -rf /"}}, "INVALID_ARGUMENTS", "command"},
		{"bad mode", "codex", nil, map[string]any{"goal": "g", "mode": "write"}, "INVALID_ARGUMENTS", ""},
		{"not installed", "codex", []opt{missing}, map[string]any{"goal": "g", "mode": "analyze"}, "EXECUTABLE_NOT_FOUND", "command"},
		{"crash", "codex", nil, map[string]any{"goal": "fake:crash", "mode": "analyze"}, "WORKER_FAILED", "stderr_tail"},
		{"malformed output", "claude", nil, map[string]any{"goal": "fake:garbage", "mode": "analyze"}, "OUTPUT_PARSE_FAILED", "stdout_head"},
		{"codex logged out", "codex", nil, map[string]any{"goal": "fake:noauth", "mode": "analyze"}, "AUTHENTICATION_REQUIRED", "stderr_tail"},
		{"claude logged out", "claude", nil, map[string]any{"goal": "fake:noauth", "mode": "analyze"}, "AUTHENTICATION_REQUIRED", "exit_code"},
		{"timeout", "codex", nil, map[string]any{"goal": "fake:sleep=30", "mode": "analyze", "timeout": "300ms"}, "TIMEOUT", "files_changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, tt.preset, root, tt.opts...)
			r, te := call(t, p, tt.args)
			if te == nil {
				t.Fatalf("succeeded: %+v", r)
			}
			if string(te.Code) != tt.code {
				t.Fatalf("code %s, want %s: %s", te.Code, tt.code, te.JSON())
			}
			if _, ok := te.Details[tt.detail]; tt.detail != "" && !ok {
				t.Fatalf("details lack %q: %s", tt.detail, te.JSON())
			}
			if te.Hint == "" && tt.code != "INVALID_ARGUMENTS" {
				t.Errorf("no hint: %s", te.JSON())
			}
		})
	}
}

func TestAvailableModelRunsAndUnreadableCatalogueWarns(t *testing.T) {
	root := newRepo(t, nil)
	codexHome := t.TempDir()
	writeFile(t, codexHome, "models_cache.json", `{"models":[{"slug":"gpt-5.6-sol","supported_reasoning_levels":[{"effort":"high"}]}]}`)
	r, te := call(t, newProvider(t, "codex", root, withEnv("CODEX_HOME", codexHome)), map[string]any{"goal": "g", "mode": "analyze", "model": "gpt-5.6-sol", "effort": "high"})
	if te != nil || anyContains(r.Warnings, "unverified") {
		t.Fatalf("%v %+v", te, r)
	}
	r, te = call(t, newProvider(t, "codex", root), map[string]any{"goal": "g", "mode": "analyze", "model": "anything"})
	if te != nil || !anyContains(r.Warnings, "unverified") || r.Model != "anything" {
		t.Fatalf("unreadable catalogue: %v %+v", te, r)
	}
	_, te = call(t, newProvider(t, "agy", root), map[string]any{"goal": "g", "mode": "analyze", "model": "gemini-flash-3.7-high"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	_, te = call(t, newProvider(t, "agy", root), map[string]any{"goal": "g", "mode": "analyze", "model": "gemini-pro"})
	if te == nil || te.Code != "REQUESTED_MODEL_UNAVAILABLE" {
		t.Fatalf("agy unknown model: %v", te)
	}
}

// TestTimeoutAndCancelKillTheTree: a descendant in the worker's process
// group dies too, even one that ignores SIGTERM after its parent exited.
func TestTimeoutAndCancelKillTheTree(t *testing.T) {
	root := newRepo(t, nil)
	for _, tc := range []struct{ name, goal, code string }{
		{"timeout", "fake:hang", "TIMEOUT"},
		{"timeout, descendant ignores TERM", "fake:hang-trap", "TIMEOUT"},
		{"client cancels", "fake:hang-trap", "CANCELLED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			t.Setenv("FAKE_PIDFILE", pidfile)
			p := newProvider(t, "codex", root)
			args := map[string]any{"goal": tc.goal, "mode": "analyze", "timeout": "700ms"}
			var te *toolerr.Error
			if tc.code == "CANCELLED" {
				ctx, cancel := context.WithCancel(context.Background())
				ctx = provider.WithProgress(ctx, func(_, _ float64, msg string) {
					// Cancel once the worker's descendant is running (its pid
					// file exists): on a loaded machine the first tick can
					// come before the fake worker got that far.
					// A pid file that exists may not be written yet: wait
					// for a pid in it, else the check below reads pid 0.
					if b, err := os.ReadFile(pidfile); err == nil && pidIn(b) > 0 && strings.Contains(msg, "elapsed") {
						cancel()
					}
				})
				args["timeout"] = "1m"
				b, _ := json.Marshal(args)
				_, err := p.Call(ctx, tool("run"), b)
				te, _ = toolerr.As(err)
			} else {
				_, te = call(t, p, args)
			}
			if te == nil || string(te.Code) != tc.code {
				t.Fatalf("%v", te)
			}
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			pid := pidIn(b)
			if pid <= 0 {
				t.Fatalf("no descendant pid in %s: %q", pidfile, b)
			}
			deadline := time.Now().Add(30 * time.Second) // generous: the machine may be loaded
			for syscall.Kill(pid, 0) == nil {
				if time.Now().After(deadline) {
					t.Fatalf("descendant %d survived", pid)
				}
				time.Sleep(20 * time.Millisecond) // polling a pid: no signal exists for another process's exit
			}
		})
	}
}

func TestDebugLogsPromptsOnlyWhenAsked(t *testing.T) {
	root := newRepo(t, nil)
	logPath := filepath.Join(t.TempDir(), "jobs.jsonl")
	p := newProvider(t, "claude", root, func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.JobLog, w.Debug = logPath, true })
	if _, te := call(t, p, map[string]any{"goal": "debuggable goal", "mode": "analyze"}); te != nil {
		t.Fatal(te.JSON())
	}
	b, _ := os.ReadFile(logPath)
	var rec jobRecord
	if err := json.Unmarshal(b, &rec); err != nil || !strings.Contains(rec.Prompt, "debuggable goal") || !strings.Contains(rec.Output, "Claude finished") {
		t.Fatalf("%v %s", err, b)
	}
}

func TestRefusalsAreLogged(t *testing.T) {
	root := newRepo(t, nil)
	logPath := filepath.Join(t.TempDir(), "jobs.jsonl")
	p := newProvider(t, "codex", root, func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.JobLog = logPath })
	_, _ = call(t, p, map[string]any{"goal": "g", "mode": "implement", "allowed_paths": []string{"../x"}}) // refused; the test reads the job log it leaves
	b, _ := os.ReadFile(logPath)
	var rec jobRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Category != "path_outside_project" || rec.Status != "failed" || rec.Mode != "implement" {
		t.Fatalf("%v %s", err, b)
	}
}

func TestFloodIsBounded(t *testing.T) {
	root := newRepo(t, nil)
	r, te := call(t, newProvider(t, "codex", root), map[string]any{"goal": "fake:flood", "mode": "analyze"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if !anyContains(r.Warnings, "bytes were dropped") || r.Summary == "" {
		t.Fatalf("%+v", r.Warnings)
	}
}

func TestLongAgyPromptGoesThroughAFile(t *testing.T) {
	root := newRepo(t, nil)
	goal := strings.Repeat("long task ", 5000)
	r, te := call(t, newProvider(t, "agy", root), map[string]any{"goal": goal, "mode": "analyze"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if !strings.Contains(r.Summary, "prompt bytes") || strings.Contains(r.Summary, "(0 prompt") {
		t.Fatalf("summary %q", r.Summary)
	}
}

func TestWorktreeIsolation(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	iso := func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Isolation = "worktree" }
	p := newProvider(t, "codex", root, iso)
	r, te := call(t, p, map[string]any{"goal": "fake:write=src/a.go", "mode": "implement", "allowed_paths": []string{"src"}, "verify_commands": []string{"true"}})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if r.Attribution != "worktree" || strings.Join(r.FilesChanged, ",") != "src/a.go" || r.Isolation.Applied || !strings.Contains(r.Isolation.Diff, "written by the fake worker") {
		t.Fatalf("%+v %+v", r, r.Isolation)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "src/a.go")); string(b) != "a\n" {
		t.Fatal("the user's tree changed without apply")
	}
	// Out of scope: never applied, even when asked.
	r, te = call(t, p, map[string]any{"goal": "fake:write=other.txt", "mode": "implement", "allowed_paths": []string{"src"}, "apply": true, "skip_verification": true})
	if te != nil || r.Isolation.Applied || !strings.Contains(r.Isolation.Reason, "scope") {
		t.Fatalf("%v %+v", te, r.Isolation)
	}
	r, te = call(t, p, map[string]any{"goal": "fake:write=src/a.go", "mode": "implement", "allowed_paths": []string{"src"}, "apply": true, "verify_commands": []string{"true"}})
	if te != nil || !r.Isolation.Applied {
		t.Fatalf("%v %+v", te, r.Isolation)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "src/a.go")); !strings.Contains(string(b), "written by the fake worker") {
		t.Fatal("diff not applied")
	}
	if out := gitIn(t, root, "worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Fatalf("worktrees left behind:\n%s", out)
	}
}

func TestShutdownGraceThenCancel(t *testing.T) {
	root := newRepo(t, nil)
	grace := func(_ *config.Provider, w *Spec, _ *provider.Deps) {
		w.ShutdownGrace = config.Duration{Duration: 200 * time.Millisecond}
	}
	p := newProvider(t, "codex", root, grace)
	started := make(chan struct{})
	var once sync.Once
	ctx := provider.WithProgress(context.Background(), func(_, _ float64, msg string) {
		once.Do(func() { close(started) })
	})
	errc := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, tool("run"), json.RawMessage(`{"goal":"fake:sleep=30","mode":"analyze"}`))
		errc <- err
	}()
	<-started
	p.Close()
	err := <-errc
	if err == nil || !strings.Contains(err.Error(), "shutdown") {
		t.Fatalf("%v", err)
	}
	if _, err := p.Call(context.Background(), tool("run"), json.RawMessage(`{"goal":"g","mode":"analyze"}`)); err == nil || !strings.Contains(err.Error(), "SHUTDOWN") {
		t.Fatalf("after close: %v", err)
	}
}

func TestJobLogHasNoSecretsOrPrompts(t *testing.T) {
	root := newRepo(t, nil)
	logPath := filepath.Join(t.TempDir(), "jobs.jsonl")
	secret := func(_ *config.Provider, w *Spec, _ *provider.Deps) {
		w.JobLog, w.Env = logPath, map[string]string{"WORKER_TOKEN": "s3cr3t-value"}
	}
	p := newProvider(t, "codex", root, secret)
	if _, te := call(t, p, map[string]any{"goal": "a very private goal", "mode": "analyze"}); te != nil {
		t.Fatal(te.JSON())
	}
	_, _ = call(t, p, map[string]any{"goal": "fake:crash", "mode": "analyze"}) // fails; the test reads the job log it leaves
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || strings.Contains(string(b), "s3cr3t") || strings.Contains(string(b), "private goal") || strings.Contains(string(b), "PATH") {
		t.Fatalf("job log:\n%s", b)
	}
	var rec jobRecord
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil || rec.Category != "worker_failed" || rec.ExitCode == nil || *rec.ExitCode != 3 || rec.Mode != "analyze" {
		t.Fatalf("%v %+v", err, rec)
	}
}

func TestStatusWithoutInference(t *testing.T) {
	root := newRepo(t, nil)
	p := newProvider(t, "agy", root)
	res, err := p.Call(context.Background(), tool("status"), json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	st := res.Structured.(*statusReport)
	if !st.Installed || st.Version != "agy 0.0.0-fake" || st.Flags != "unverified" || st.Auth != "unverified" || !st.Git.Available {
		t.Fatalf("%+v", st)
	}
	if len(st.ModelStatus) != 2 || st.ModelStatus[0].Status != "available" {
		t.Fatalf("models %+v", st.ModelStatus)
	}
	missing := func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Command = "no-such-worker-cli" }
	st = newProvider(t, "codex", root, missing).status(context.Background())
	if st.Installed || !anyContains(st.Warnings, "executable not found") {
		t.Fatalf("%+v", st)
	}
	if d := newProvider(t, "codex", root, missing).Diagnostics(); d[0].Status != "warning" {
		t.Fatalf("doctor: %+v", d)
	}
}

func TestCustomWorker(t *testing.T) {
	root := newRepo(t, nil)
	script := filepath.Join(t.TempDir(), "my-agent")
	writeFile(t, filepath.Dir(script), "my-agent", "#!/bin/sh\n# argv: --mode M --prompt-file F\nf=$4\nprintf '{\"event\":\"start\"}\\n{\"event\":\"done\",\"final\":{\"text\":\"read %s bytes in mode %s\"}}\\n' \"$(wc -c < \"$f\" | tr -d ' ')\" \"$2\"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	pc := config.Provider{ID: "mine", Kind: "workers", Enabled: true}
	spec := &Spec{Command: script, Args: []string{"--mode", "{mode}"},
		Worker: &WorkerDef{Prompt: "file", PromptArgs: []string{"--prompt-file", "{prompt_file}"}, Output: "jsonl", Answer: "final.text"}}
	pc.Spec = spec
	p, err := New(provider.HeaderOf(pc), spec, provider.Deps{ProjectDir: root})
	if err != nil {
		t.Fatal(err)
	}
	r, te := call(t, p, map[string]any{"goal": "hello", "mode": "review"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if !strings.HasPrefix(r.Summary, "read ") || !strings.HasSuffix(r.Summary, "in mode review") {
		t.Fatalf("summary %q", r.Summary)
	}
}

func TestLongAnswerKeepsHeadAndTail(t *testing.T) {
	root := newRepo(t, nil)
	r, te := call(t, newProvider(t, "codex", root), map[string]any{"goal": "fake:long-answer", "mode": "analyze"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if !r.SummaryTruncated || !strings.HasPrefix(r.Summary, "START") || !strings.HasSuffix(r.Summary, "END") || len([]rune(r.Summary)) > SummaryMax {
		t.Fatalf("truncated=%v len=%d", r.SummaryTruncated, len(r.Summary))
	}
}

func TestProjectRootBelowTheRepository(t *testing.T) {
	repo := newRepo(t, map[string]string{"app/src/a.go": "a\n", "shared/lib.go": "l\n"})
	root := filepath.Join(repo, "app")
	p := newProvider(t, "codex", root)
	// The worker runs in app/ (-C); it writes app/src/b.go and, via "..", shared/lib.go.
	r, te := call(t, p, map[string]any{"goal": "fake:write=src/b.go fake:write=../shared/lib.go", "mode": "implement",
		"allowed_paths": []string{"src"}, "skip_verification": true})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if strings.Join(r.FilesChanged, ",") != "<repository>/shared/lib.go,src/b.go" || strings.Join(r.ScopeViolations, ",") != "<repository>/shared/lib.go" {
		t.Fatalf("changed %v violations %v", r.FilesChanged, r.ScopeViolations)
	}
}

// pidIn is the pid a fake worker wrote (0 while the file is still empty).
func pidIn(b []byte) int {
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
