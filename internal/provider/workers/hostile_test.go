package workers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// hostileEnv gives the fake worker (and so the runtime, which shares the
// provider's env) the marker path the hostile scripts try to touch.
func hostileEnv(vars map[string]string) opt {
	return func(_ *config.Provider, w *Spec, _ *provider.Deps) {
		if w.Env == nil {
			w.Env = map[string]string{}
		}
		for k, v := range vars {
			w.Env[k] = v
		}
	}
}

func violates(r *result, sub string) bool { return anyContains(r.ScopeViolations, sub) }

// TestRuntimeGitRunsNothingTheWorkerConfigured: a worker that sets
// core.fsmonitor, a clean filter, a textconv, a pager and hooks gets none of
// them run by the runtime's own git (attribution, the next job's worktree),
// and every change under .git is a violation.
func TestRuntimeGitRunsNothingTheWorkerConfigured(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	marker := filepath.Join(t.TempDir(), "marker")
	p := newProvider(t, "codex", root, hostileEnv(map[string]string{"FAKE_MARKER": marker}))
	r, te := call(t, p, map[string]any{"goal": "fake:hostile=gitconfig", "mode": "implement", "allowed_paths": []string{"src"}, "skip_verification": true})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the runtime's own git ran a program the worker configured")
	}
	for _, want := range []string{"repository: .git/config was changed", "repository: .git/hooks/post-checkout was created", ".gitattributes"} {
		if !violates(r, want) {
			t.Errorf("no violation %q: %q", want, r.ScopeViolations)
		}
	}
	if !has(r.FilesChanged, "src/a.go") || r.Status != "partial" {
		t.Errorf("%+v", r)
	}
	// The next job, isolated: worktree add, snapshots and the diff run
	// nothing either (post-checkout hook, smudge/clean filters).
	q := newProvider(t, "codex", root, hostileEnv(map[string]string{"FAKE_MARKER": marker}),
		func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Isolation = "worktree" })
	if _, te := call(t, q, map[string]any{"goal": "fake:write=src/b.go", "mode": "implement", "allowed_paths": []string{"src"}, "skip_verification": true, "apply": true}); te != nil {
		t.Fatal(te.JSON())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the runtime's own git ran a program the worker configured (isolated job)")
	}
}

// TestHiddenChangesAreAttributed: each way of hiding a change from git
// status is seen by comparing content, refs, index flags and .git files.
func TestHiddenChangesAreAttributed(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		script, mode string
		want         []string
		setup        func(t *testing.T, root string)
	}{
		{"skipworktree", "analyze", []string{"src/a.go", "repository: the index flag skip-worktree was set on src/a.go"}, nil},
		{"exclude", "analyze", []string{"repository: .git/info/exclude was"}, nil},
		{"dropbranch", "analyze", []string{"repository: ref refs/heads/feature was deleted"}, func(t *testing.T, root string) {
			gitIn(t, root, "branch", "feature")
		}},
		{"symlink", "implement", []string{"src/out"}, nil},
		{"stash", "analyze", []string{"repository: ref refs/stash was created", "notes.txt"}, func(t *testing.T, root string) {
			writeFile(t, root, "notes.txt", "user edit\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			root := newRepo(t, map[string]string{"src/a.go": "a\n", "notes.txt": "notes\n"})
			if tt.setup != nil {
				tt.setup(t, root)
			}
			p := newProvider(t, "codex", root, hostileEnv(map[string]string{"FAKE_OUTSIDE": outside}))
			r, te := call(t, p, map[string]any{"goal": "fake:hostile=" + tt.script, "mode": tt.mode, "allowed_paths": []string{"src"}, "skip_verification": true})
			if te != nil {
				t.Fatal(te.JSON())
			}
			for _, w := range tt.want {
				if !violates(r, w) {
					t.Errorf("no violation %q: %q", w, r.ScopeViolations)
				}
			}
			if r.Status != "partial" || r.ErrorCategory != "scope_violation" {
				t.Errorf("status %s/%s", r.Status, r.ErrorCategory)
			}
		})
	}
}

// TestSymlinkInScopeWarnsBeforeTheJob: a link already in the scope that
// leads out is named before anything runs (a write through it is invisible).
func TestSymlinkInScopeWarnsBeforeTheJob(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "src", "cache")); err != nil {
		t.Fatal(err)
	}
	r, te := call(t, newProvider(t, "codex", root), map[string]any{"goal": "fake:write=src/a.go", "mode": "implement", "allowed_paths": []string{"src"}, "skip_verification": true})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if !anyContains(r.Warnings, "src/cache is a symbolic link") {
		t.Fatalf("%q", r.Warnings)
	}
}

// TestAbsoluteWriteUnderIsolation: a worker in its worktree that writes to
// the real project tree by absolute path is caught, and its diff is not
// applied.
func TestAbsoluteWriteUnderIsolation(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	p := newProvider(t, "codex", root, hostileEnv(map[string]string{"FAKE_ROOT": root}),
		func(_ *config.Provider, w *Spec, _ *provider.Deps) { w.Isolation = "worktree" })
	r, te := call(t, p, map[string]any{"goal": "fake:hostile=absolute fake:write=src/b.go", "mode": "implement", "allowed_paths": []string{"src"}, "skip_verification": true, "apply": true})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if !violates(r, "src/a.go") || !anyContains(r.ConcernsOrBlockers, "outside the job's worktree") || r.Isolation.Applied {
		t.Fatalf("%+v %+v", r, r.Isolation)
	}
}

// TestUncommittedWorkIsSavedBeforeTheJob: a worker that resets and cleans
// the tree destroys nothing for good: the result says where it was saved
// and how to restore it, and the restore works.
func TestUncommittedWorkIsSavedBeforeTheJob(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n", "notes.txt": "notes\n"})
	writeFile(t, root, "notes.txt", "the user's edit in progress\n")
	writeFile(t, root, "draft.md", "an untracked draft\n")
	r, te := call(t, newProvider(t, "codex", root), map[string]any{"goal": "fake:hostile=reset", "mode": "analyze"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	s := r.Saved
	if s == nil || !strings.HasPrefix(s.Ref, "refs/agent-tools/saved/") || strings.Join(s.Touched, ",") != "draft.md,notes.txt" || !strings.Contains(s.Restore, s.Ref) {
		t.Fatalf("saved: %+v", s)
	}
	if !anyContains(r.ConcernsOrBlockers, "held your uncommitted changes") || !violates(r, "notes.txt") {
		t.Fatalf("%+v", r)
	}
	gitIn(t, root, "restore", "--source="+s.Ref, "--worktree", "--", "notes.txt", "draft.md")
	for name, want := range map[string]string{"notes.txt": "the user's edit in progress\n", "draft.md": "an untracked draft\n"} {
		if b, _ := os.ReadFile(filepath.Join(root, name)); string(b) != want {
			t.Errorf("%s restored as %q", name, b)
		}
	}
	// A clean tree saves nothing.
	clean := newRepo(t, map[string]string{"a": "a\n"})
	if r, te := call(t, newProvider(t, "codex", clean), map[string]any{"goal": "look", "mode": "analyze"}); te != nil || r.Saved != nil {
		t.Fatalf("%v %+v", te, r)
	}
}

// TestNoConcurrentJobsInOneTreeWithoutIsolation: the runtime cannot tell
// which process wrote a file, so an implement job does not share a
// non-isolated tree, even with a disjoint scope.
func TestNoConcurrentJobsInOneTreeWithoutIsolation(t *testing.T) {
	root := newRepo(t, map[string]string{"src/api/a.go": "a\n", "src/ui/b.go": "b\n"})
	p := newProvider(t, "codex", root)
	done := make(chan *result, 1)
	go func() {
		r, _ := call(t, p, map[string]any{"goal": "fake:sleep=3 fake:write=src/api/a.go", "mode": "implement", "allowed_paths": []string{"src/api"}, "skip_verification": true})
		done <- r
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(p.locks.snapshot()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling a lock table: there is no event for "acquired"
	}
	for _, args := range []map[string]any{
		{"goal": "g", "mode": "implement", "allowed_paths": []string{"src/ui"}},
		{"goal": "g", "mode": "analyze"},
	} {
		_, te := call(t, p, args)
		if te == nil || te.Code != "SCOPE_CONFLICT" || !strings.HasPrefix(te.Details["holder"].(string), "codex-") {
			t.Errorf("%v: %v", args["mode"], te)
		}
	}
	if r := <-done; r == nil || r.Status != "success" {
		t.Fatalf("%+v", r)
	}
}

// TestBackgroundWriterIsKilled: a worker that leaves a setsid'd writer
// behind: the job's processes are all killed when it ends, so the write
// after attribution never happens.
func TestBackgroundWriterIsKilled(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	root := newRepo(t, map[string]string{"a.txt": "a\n"})
	if _, te := call(t, newProvider(t, "codex", root), map[string]any{"goal": "fake:hostile=background", "mode": "analyze"}); te != nil {
		t.Fatal(te.JSON())
	}
	// No event marks "a process that should be dead did not write": wait
	// past the writer's own delay, bounded.
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(root, "late.txt")); err == nil {
		t.Fatal("a background process of the job wrote after the job ended")
	}
}

// TestEdgeRepositories: a repository without commits, and one holding an
// untracked nested repository without commits, are still attributed.
func TestEdgeRepositories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	unborn, _ := filepath.EvalSymlinks(t.TempDir())
	gitIn(t, unborn, "init", "-q")
	writeFile(t, unborn, "draft.txt", "draft\n")
	r, te := call(t, newProvider(t, "codex", unborn), map[string]any{"goal": "fake:write=new.txt", "mode": "analyze"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if r.Attribution != "git" || strings.Join(r.ScopeViolations, ",") != "new.txt" || r.Saved == nil {
		t.Fatalf("unborn: %+v %+v", r, r.Saved)
	}

	nested := newRepo(t, map[string]string{"a.txt": "a\n"})
	gitIn(t, nested, "init", "-q", "sub")
	writeFile(t, nested, "sub/x.txt", "x\n")
	r, te = call(t, newProvider(t, "codex", nested), map[string]any{"goal": "fake:write=b.txt", "mode": "analyze"})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if r.Attribution != "git" || strings.Join(r.ScopeViolations, ",") != "b.txt" {
		t.Fatalf("nested: %+v %q", r, r.Warnings)
	}
}

// TestBrokenRepositoryIsNeverASuccess: a worker that makes the repository
// unreadable after the job does not get a clean result.
func TestBrokenRepositoryIsNeverASuccess(t *testing.T) {
	root := newRepo(t, map[string]string{"src/a.go": "a\n"})
	r, te := call(t, newProvider(t, "codex", root), map[string]any{"goal": "fake:hostile=breakgit", "mode": "implement", "allowed_paths": []string{"src"}, "skip_verification": true})
	if te != nil {
		t.Fatal(te.JSON())
	}
	if r.Status != "partial" || r.ErrorCategory != "attribution_failed" || r.Attribution != "unavailable" {
		t.Fatalf("%+v", r)
	}
}
