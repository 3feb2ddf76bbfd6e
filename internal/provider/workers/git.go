package workers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// gitTimeout bounds every git command the attribution runs.
const gitTimeout = 60 * time.Second

// git runs git in dir with args and returns stdout; a non-zero exit is an error.
type git struct {
	env []string
}

func (g git) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	res, err := proc.Run(ctx, proc.Spec{
		Path: "git", Args: args, Dir: dir, Env: g.env, Timeout: gitTimeout, Grace: time.Second,
		MaxOutput: 64 << 20,
	})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 || res.TimedOut || res.Cancelled {
		return nil, fmt.Errorf("git %s: exit %d: %s", args[0], res.ExitCode, strings.TrimSpace(proc.Tail(proc.Text(res.Stderr), 300)))
	}
	return res.Stdout, nil
}

// snapshot is the state of a work tree at one instant: HEAD, every path
// porcelain status reports dirty, and a content hash of each dirty path.
type snapshot struct {
	top    string            // the work tree's top level
	prefix string            // the project root relative to top ("" when equal), slash form
	head   string            // "" before the first commit
	dirty  map[string]string // top-relative path → content hash ("-" when absent)
}

// takeSnapshot records dir's work tree; it fails outside a git work tree.
func (g git) takeSnapshot(ctx context.Context, dir string) (*snapshot, error) {
	out, err := g.run(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	s := &snapshot{top: strings.TrimSpace(string(out)), dirty: map[string]string{}}
	realDir, _ := filepath.EvalSymlinks(dir)
	realTop, _ := filepath.EvalSymlinks(s.top)
	if rel, ok := within(realTop, realDir); ok && rel != "." {
		s.prefix = rel
	}
	if h, err := g.run(ctx, dir, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		s.head = strings.TrimSpace(string(h))
	}
	st, err := g.run(ctx, s.top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	for _, p := range parsePorcelain(st) {
		s.dirty[p] = hashFile(filepath.Join(s.top, p))
	}
	return s, nil
}

// parsePorcelain reads `git status --porcelain=v1 -z --no-renames` output.
func parsePorcelain(b []byte) []string {
	var out []string
	for _, rec := range bytes.Split(b, []byte{0}) {
		if len(rec) < 4 {
			continue
		}
		out = append(out, string(rec[3:]))
	}
	return out
}

// hashFile is the SHA-256 of a file's bytes, "-" when it does not exist and
// "dir" for a directory (a nested repository shows as one).
func hashFile(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "-"
	}
	if fi.IsDir() {
		return "dir"
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		t, _ := os.Readlink(p)
		return "link:" + t
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "unreadable"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// attribution is what git says a job changed.
type attribution struct {
	// Changed are project-relative paths (paths outside the project root keep
	// a "../"-free top-relative form prefixed with "<repo>/").
	Changed []string
	// Commits are the commits HEAD moved through (the worker's commits).
	Commits []string
}

// attribute compares before with the tree's state now. A path dirty before
// and byte-identical now is never blamed; committed paths come from the diff
// of HEAD's movement.
func (g git) attribute(ctx context.Context, dir string, before *snapshot) (*attribution, *snapshot, error) {
	after, err := g.takeSnapshot(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	cand := map[string]bool{}
	for p := range before.dirty {
		cand[p] = true
	}
	for p := range after.dirty {
		cand[p] = true
	}
	a := &attribution{}
	if after.head != before.head && after.head != "" {
		base := before.head
		if base == "" {
			base = emptyTree
		}
		names, err := g.run(ctx, after.top, "diff", "--name-only", "-z", "--no-renames", base, after.head)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range bytes.Split(names, []byte{0}) {
			if len(p) > 0 {
				cand[string(p)] = true
			}
		}
		rng := after.head
		if before.head != "" {
			rng = before.head + ".." + after.head
		}
		if revs, err := g.run(ctx, after.top, "rev-list", "--reverse", rng); err == nil {
			a.Commits = strings.Fields(string(revs))
		}
	}
	for p := range cand {
		was, wasDirty := before.dirty[p]
		now := hashFile(filepath.Join(after.top, p))
		if wasDirty && was == now {
			continue // pre-existing change, untouched: never the worker's
		}
		a.Changed = append(a.Changed, projectPath(before.prefix, p))
	}
	slices.Sort(a.Changed)
	return a, after, nil
}

// emptyTree is git's well-known empty tree object.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// projectPath maps a top-relative path to the project root's frame; a path
// outside the project root is marked so that it can never look in scope.
func projectPath(prefix, p string) string {
	if prefix == "" {
		return p
	}
	if rel, ok := strings.CutPrefix(p, prefix+"/"); ok {
		return rel
	}
	return outsidePrefix + p
}

// outsidePrefix marks a changed path outside the project root (but inside its
// repository): no normalised scope can cover it.
const outsidePrefix = "<repository>/"

// worktree is an isolated checkout for one implement job.
type worktree struct {
	dir  string
	base string
}

// addWorktree checks out HEAD of the repository at dir into a new detached
// worktree under parent; the project root's frame is kept (same prefix).
func (g git) addWorktree(ctx context.Context, s *snapshot, parent string) (*worktree, string, error) {
	if s.head == "" {
		return nil, "", fmt.Errorf("isolation needs at least one commit")
	}
	dir := filepath.Join(parent, "worktree")
	if _, err := g.run(ctx, s.top, "worktree", "add", "--detach", "--quiet", dir, s.head); err != nil {
		return nil, "", err
	}
	projectDir := dir
	if s.prefix != "" {
		projectDir = filepath.Join(dir, filepath.FromSlash(s.prefix))
	}
	return &worktree{dir: dir, base: s.head}, projectDir, nil
}

// diff stages everything in the worktree and returns the binary diff from
// its base plus the changed paths (top-relative).
func (g git) worktreeDiff(ctx context.Context, w *worktree) (string, []string, error) {
	if _, err := g.run(ctx, w.dir, "add", "-A"); err != nil {
		return "", nil, err
	}
	d, err := g.run(ctx, w.dir, "diff", "--cached", "--binary", "--no-renames", w.base)
	if err != nil {
		return "", nil, err
	}
	names, err := g.run(ctx, w.dir, "diff", "--cached", "--name-only", "-z", "--no-renames", w.base)
	if err != nil {
		return "", nil, err
	}
	var paths []string
	for _, p := range bytes.Split(names, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	slices.Sort(paths)
	return string(d), paths, nil
}

// applyDiff applies a worktree's diff to the user's tree (index untouched).
func (g git) applyDiff(ctx context.Context, top, diff string, tmp string) error {
	f := filepath.Join(tmp, "worker.diff")
	if err := os.WriteFile(f, []byte(diff), 0o600); err != nil {
		return err
	}
	_, err := g.run(ctx, top, "apply", "--binary", "--whitespace=nowarn", f)
	return err
}

func (g git) removeWorktree(ctx context.Context, top string, w *worktree) {
	_, _ = g.run(context.WithoutCancel(ctx), top, "worktree", "remove", "--force", w.dir)
}
