package workers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// gitTimeout bounds every git command the attribution runs.
const gitTimeout = 60 * time.Second

// git runs the runtime's own git commands. The worker controls the
// repository it worked in (its config, hooks, attributes, index flags), so
// every command is built by command() to run nothing the repository names:
// no hooks, no fsmonitor, no pager, editor or credential helper, no
// external diff or textconv, no clean/smudge filter (pin switches off each
// filter driver the config declares), no replace refs, no system config,
// and — once pinned — the git dir and work tree found before the job, so a
// core.worktree or a rewritten .git file cannot point the runtime elsewhere.
type git struct {
	env []string
	// pre are global options from pin: --git-dir, --work-tree and the -c
	// overrides of the config's filter drivers.
	pre []string
	// index, when set, is the index file the command uses (a fresh one for
	// content snapshots; never the user's).
	index string
}

// newGit returns a git with env hardened: no GIT_* variable of the
// runtime's environment reaches git (GIT_DIR, GIT_INDEX_FILE or
// GIT_EXTERNAL_DIFF would redirect or run things), and the ones that switch
// off prompts, optional index writes, system config and replace refs are set.
func newGit(env []string) git {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_") {
			out = append(out, kv)
		}
	}
	out = append(out, "GIT_CONFIG_NOSYSTEM=1", "GIT_ATTR_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_PAGER=cat", "GIT_EDITOR=false", "GIT_ASKPASS=false",
		"GIT_AUTHOR_NAME=agent-tools", "GIT_AUTHOR_EMAIL=agent-tools@localhost",
		"GIT_COMMITTER_NAME=agent-tools", "GIT_COMMITTER_EMAIL=agent-tools@localhost",
		"AGENT_TOOLS_GIT_EMPTY=", "AGENT_TOOLS_GIT_FALSE=false")
	return git{env: out}
}

// gitSafety are the -c settings of every command: they come after the
// pinned overrides, so nothing can unset them.
var gitSafety = []string{
	"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false",
	"-c", "core.pager=cat", "-c", "core.editor=false", "-c", "sequence.editor=false", "-c", "core.askPass=false",
	"-c", "credential.helper=", "-c", "core.sshCommand=false", "-c", "core.gitProxy=", "-c", "protocol.allow=never",
	"-c", "diff.external=", "-c", "core.alternateRefsCommand=", "-c", "uploadpack.packObjectsHook=",
	"-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "gpg.program=false", "-c", "commit.gpgSign=false",
	"-c", "core.splitIndex=false", "-c", "advice.detachedHead=false", "-c", "submodule.recurse=false",
	"-c", "trace2.normalTarget=false", "-c", "trace2.perfTarget=false", "-c", "trace2.eventTarget=false",
}

// command is the one place a git argv is built.
func (g git) command(args ...string) []string {
	out := make([]string, 0, 1+len(g.pre)+len(gitSafety)+len(args)+2)
	out = append(out, "--no-pager")
	out = append(out, g.pre...)
	out = append(out, gitSafety...)
	if len(args) > 0 {
		out = append(out, args[0])
		switch args[0] {
		case "diff", "diff-tree", "diff-index", "log", "show":
			out = append(out, "--no-ext-diff", "--no-textconv")
		}
		out = append(out, args[1:]...)
	}
	return out
}

func (g git) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	env := g.env
	if g.index != "" {
		env = append(slices.Clip(env), "GIT_INDEX_FILE="+g.index)
	}
	res, err := proc.Run(ctx, proc.Spec{
		Path: "git", Args: g.command(args...), Dir: dir, Env: env, Timeout: gitTimeout, Grace: time.Second,
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

func (g git) withIndex(path string) git { g.index = path; return g }

// programKey matches config keys that name a program git runs per path
// (filters, textconv, external diff and merge drivers): pin sets each one
// it finds to empty, since their names are the repository's choice.
var programKey = regexp.MustCompile(`(?i)^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver)$`)

// pin binds g to one repository (explicit --git-dir and --work-tree) and
// switches off every filter, textconv and diff/merge driver its config
// declares. It reads the config with git config --list, which runs nothing.
func (g git) pin(ctx context.Context, gitDir, top string) (git, error) {
	g.pre = []string{"--git-dir=" + gitDir, "--work-tree=" + top}
	out, err := g.run(ctx, top, "config", "-z", "--list")
	if err != nil {
		return g, err
	}
	g.pre = append(slices.Clone(g.pre), programOverrides(out)...)
	return g, nil
}

// override sets key to value ("" or "false") for one command. -c splits
// at the first "=", so a key whose subsection holds one ([filter "a=b"])
// goes through --config-env, which splits at the last, naming a variable
// newGit sets.
func override(key, value string) []string {
	if !strings.Contains(key, "=") {
		return []string{"-c", key + "=" + value}
	}
	if value == "" {
		return []string{"--config-env=" + key + "=AGENT_TOOLS_GIT_EMPTY"}
	}
	return []string{"--config-env=" + key + "=AGENT_TOOLS_GIT_FALSE"}
}

// programOverrides reads `git config -z --list` (key, newline, value, NUL)
// and returns the -c options that switch off every program the entries
// name per path, and make every filter optional.
func programOverrides(list []byte) []string {
	var out []string
	for _, kv := range bytes.Split(list, []byte{0}) {
		key, _, _ := bytes.Cut(kv, []byte{'\n'})
		k := string(key)
		if k == "" {
			continue
		}
		if programKey.MatchString(k) {
			out = append(out, override(k, "")...)
		}
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "filter.") && strings.HasSuffix(lk, ".required") {
			out = append(out, override(k, "false")...)
		}
	}
	return out
}

// snapshot is the state of a repository at one instant, by content: the
// tree of every file in the work tree that is not ignored (written from a
// fresh index, so no skip-worktree or assume-unchanged flag and no stat
// cache hides a change), HEAD, every ref, the index's flags, and the files
// under .git that make git run or hide things.
type snapshot struct {
	top     string // the work tree's top level
	gitDir  string // absolute
	common  string // the common git dir (== gitDir outside linked worktrees)
	prefix  string // the project root relative to top ("" when equal), slash form
	head    string // "" before the first commit
	tree    string // the work tree's content
	refs    map[string]string
	flags   map[string]string // top-relative path → "skip-worktree" | "assume-unchanged"
	meta    map[string]string // .git-relative file → content hash
	headRef string            // the branch HEAD names ("" when detached)
}

// locate finds the repository of dir; it fails outside a git work tree.
// It runs before the job, in a repository the worker has not touched yet.
func (g git) locate(ctx context.Context, dir string) (top, gitDir, common string, err error) {
	out, err := g.run(ctx, dir, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		return "", "", "", err
	}
	f := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(f) != 3 {
		return "", "", "", fmt.Errorf("git rev-parse: unexpected output")
	}
	common = f[2]
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	return f[0], f[1], filepath.Clean(common), nil
}

// takeSnapshot records the repository g is pinned to; dir is the project
// root (for the prefix) and scratch a private directory for the fresh index.
func (g git) takeSnapshot(ctx context.Context, top, gitDir, common, dir, scratch string) (*snapshot, error) {
	s := &snapshot{top: top, gitDir: gitDir, common: common}
	realDir, _ := filepath.EvalSymlinks(dir)
	realTop, _ := filepath.EvalSymlinks(s.top)
	if rel, ok := within(realTop, realDir); ok && rel != "." {
		s.prefix = rel
	}
	if h, err := g.run(ctx, top, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err == nil {
		s.head = strings.TrimSpace(string(h))
	}
	if r, err := g.run(ctx, top, "symbolic-ref", "-q", "HEAD"); err == nil {
		s.headRef = strings.TrimSpace(string(r))
	}
	var err error
	if s.tree, err = g.contentTree(ctx, top, s.head, scratch); err != nil {
		return nil, err
	}
	if s.refs, err = g.refs(ctx, top); err != nil {
		return nil, err
	}
	if s.flags, err = g.indexFlags(ctx, top); err != nil {
		return nil, err
	}
	s.meta = gitMeta(gitDir, common)
	return s, nil
}

// contentTree writes the tree of dir's work tree as it is on disk: a fresh
// index (read from head, no flags, no stat data, so every file is hashed
// again), then add -A. Ignored files are not in it.
func (g git) contentTree(ctx context.Context, dir, head, scratch string) (string, error) {
	f, err := os.CreateTemp(scratch, "index-")
	if err != nil {
		return "", err
	}
	f.Close()
	os.Remove(f.Name()) // git creates it; an empty file is not an index
	defer os.Remove(f.Name())
	gi := g.withIndex(f.Name())
	if head != "" {
		if _, err := gi.run(ctx, dir, "read-tree", head); err != nil {
			return "", err
		}
	}
	if _, err := gi.run(ctx, dir, "add", "-A", "--ignore-errors", "--", "."); err != nil {
		// An untracked nested repository without a commit cannot be added
		// (not even as a gitlink): leave such repositories out and retry.
		nested := gi.nestedRepos(ctx, dir)
		if len(nested) == 0 {
			return "", err
		}
		args := []string{"add", "-A", "--ignore-errors", "--", "."}
		for _, n := range nested {
			args = append(args, ":(exclude,literal)"+n)
		}
		if _, err := gi.run(ctx, dir, args...); err != nil {
			return "", err
		}
	}
	out, err := gi.run(ctx, dir, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// nestedRepos lists the untracked directories of dir that hold a
// repository of their own (top-relative, without the trailing slash).
func (g git) nestedRepos(ctx context.Context, dir string) []string {
	out, err := g.run(ctx, dir, "ls-files", "-z", "--others", "--directory", "--exclude-standard")
	if err != nil {
		return nil
	}
	var repos []string
	for _, p := range nulPaths(out) {
		if d, ok := strings.CutSuffix(p, "/"); ok {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(d), ".git")); err == nil {
				repos = append(repos, d)
			}
		}
	}
	return repos
}

// refs lists every ref with the object it names.
func (g git) refs(ctx context.Context, dir string) (map[string]string, error) {
	out, err := g.run(ctx, dir, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if sha, name, ok := strings.Cut(l, " "); ok {
			m[name] = sha
		}
	}
	return m, nil
}

// indexFlags lists the user index's entries whose changes git status would
// not show (skip-worktree, assume-unchanged).
func (g git) indexFlags(ctx context.Context, dir string) (map[string]string, error) {
	out, err := g.run(ctx, dir, "ls-files", "-v", "-z")
	if err != nil {
		return nil, err
	}
	return parseIndexFlags(out), nil
}

// parseIndexFlags reads `git ls-files -v -z`: a tag letter, a space, the
// path. S/s is skip-worktree, lower case is assume-unchanged.
func parseIndexFlags(out []byte) map[string]string {
	m := map[string]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) < 3 {
			continue
		}
		tag, path := rec[0], string(rec[2:])
		switch {
		case tag == 'S' || tag == 's':
			m[path] = "skip-worktree"
		case tag >= 'a' && tag <= 'z':
			m[path] = "assume-unchanged"
		}
	}
	return m
}

// nulPaths splits NUL-terminated paths (git's -z output), dropping empties.
func nulPaths(b []byte) []string {
	var out []string
	for _, p := range bytes.Split(b, []byte{0}) {
		if len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out
}

// gitMeta hashes the files under the git dirs that make git run programs
// or hide changes: config, hooks, info (exclude, attributes, sparse
// checkout, grafts), alternates, shallow. Refs are compared through git.
func gitMeta(dirs ...string) map[string]string {
	m := map[string]string{}
	for _, d := range slices.Compact(dirs) {
		for _, f := range []string{"config", "config.worktree", "commondir", "shallow", "objects/info/alternates", "objects/info/http-alternates"} {
			if h := hashFile(filepath.Join(d, f)); h != "-" {
				m[metaName(dirs[0], d, f)] = h
			}
		}
		for _, sub := range []string{"hooks", "info"} {
			root := filepath.Join(d, sub)
			n := 0
			_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
				if err != nil || e.IsDir() {
					return nil
				}
				if n++; n > 1000 {
					return filepath.SkipAll
				}
				rel, _ := filepath.Rel(d, p)
				m[metaName(dirs[0], d, filepath.ToSlash(rel))] = hashFile(p)
				return nil
			})
		}
	}
	return m
}

// metaName names a git-dir file the way a user knows it: .git/<f> for the
// common dir, .git/worktrees/<name>/<f> for a linked worktree's own.
func metaName(gitDir, d, f string) string {
	if d == gitDir && filepath.Base(d) == ".git" || d != gitDir {
		return ".git/" + f
	}
	return ".git(" + filepath.Base(d) + ")/" + f
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

// attribution is what changed between two snapshots.
type attribution struct {
	// Changed are project-relative paths (paths outside the project root but
	// in its repository carry outsidePrefix).
	Changed []string
	// Commits are the commits HEAD moved through (the worker's commits).
	Commits []string
	// Hidden are changes to the repository itself, each a sentence: .git
	// files, refs other than HEAD's branch moving forward, index flags.
	Hidden []string
}

// diff compares two snapshots of the same repository by content.
func (g git) diff(ctx context.Context, before, after *snapshot) (*attribution, error) {
	a := &attribution{}
	cand := map[string]bool{}
	if before.tree != after.tree {
		names, err := g.run(ctx, before.top, "diff-tree", "-r", "-z", "--name-only", "--no-renames", before.tree, after.tree)
		if err != nil {
			return nil, err
		}
		for _, p := range nulPaths(names) {
			cand[p] = true
		}
	}
	if after.head != before.head && after.head != "" {
		base := before.head
		if base == "" {
			base = emptyTree
		}
		names, err := g.run(ctx, before.top, "diff-tree", "-r", "-z", "--name-only", "--no-renames", base, after.head)
		if err != nil {
			return nil, err
		}
		for _, p := range nulPaths(names) {
			cand[p] = true
		}
		rng := []string{after.head}
		if before.head != "" {
			rng = []string{after.head, "^" + before.head}
		}
		if revs, err := g.run(ctx, before.top, append([]string{"rev-list", "--reverse"}, rng...)...); err == nil {
			a.Commits = strings.Fields(string(revs))
		}
	}
	for p := range cand {
		a.Changed = append(a.Changed, projectPath(before.prefix, p))
	}
	slices.Sort(a.Changed)
	a.Hidden = g.hiddenChanges(ctx, before, after)
	return a, nil
}

// hiddenChanges are changes to the repository that git status does not
// show: .git files, refs, index flags.
func (g git) hiddenChanges(ctx context.Context, before, after *snapshot) []string {
	var out []string
	for _, k := range unionKeys(before.meta, after.meta) {
		was, now := before.meta[k], after.meta[k]
		switch {
		case was == now:
		case was == "":
			out = append(out, k+" was created")
		case now == "":
			out = append(out, k+" was deleted")
		default:
			out = append(out, k+" was changed")
		}
	}
	for _, k := range unionKeys(before.refs, after.refs) {
		was, now := before.refs[k], after.refs[k]
		switch {
		case was == now:
		case k == before.headRef && was == before.head && now == after.head && g.isAncestor(ctx, before.top, was, now):
			// HEAD's branch moved forward by the job's commits (reported as commits).
		case was == "":
			out = append(out, fmt.Sprintf("ref %s was created (%s)", k, short(now)))
		case now == "":
			out = append(out, fmt.Sprintf("ref %s was deleted (was %s; `git update-ref %s %s` restores it while the object exists)", k, short(was), k, was))
		default:
			out = append(out, fmt.Sprintf("ref %s moved from %s to %s (`git update-ref %s %s` restores it)", k, short(was), short(now), k, was))
		}
	}
	if before.headRef != after.headRef {
		out = append(out, fmt.Sprintf("HEAD was switched from %q to %q", or(before.headRef, "detached "+short(before.head)), or(after.headRef, "detached "+short(after.head))))
	}
	for _, k := range unionKeys(before.flags, after.flags) {
		if now := after.flags[k]; now != "" && now != before.flags[k] {
			out = append(out, fmt.Sprintf("the index flag %s was set on %s (hides its changes from git status)", now, projectPath(before.prefix, k)))
		}
	}
	return out
}

func (g git) isAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := g.run(ctx, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

func unionKeys(a, b map[string]string) []string {
	out := make([]string, 0, len(a)+len(b))
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
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

// saveUncommitted keeps the work tree's uncommitted content (tracked and
// untracked, not ignored) as a commit under refs/agent-tools/saved/ before
// a job, so that a worker's reset or stash cannot destroy it. The ref is
// named by the content, so the same state is saved once. It returns the
// ref and commit, or "" when there is nothing uncommitted.
func (g git) saveUncommitted(ctx context.Context, s *snapshot, job string) (ref, commit string, err error) {
	headTree := emptyTree
	if s.head != "" {
		out, err := g.run(ctx, s.top, "rev-parse", s.head+"^{tree}")
		if err != nil {
			return "", "", err
		}
		headTree = strings.TrimSpace(string(out))
	}
	if headTree == s.tree {
		return "", "", nil
	}
	args := []string{"commit-tree", s.tree, "-m", "agent-tools: uncommitted changes before job " + job}
	if s.head != "" {
		args = append(args, "-p", s.head)
	}
	out, err := g.run(ctx, s.top, args...)
	if err != nil {
		return "", "", err
	}
	commit = strings.TrimSpace(string(out))
	ref = "refs/agent-tools/saved/" + short(s.tree)
	if _, err := g.run(ctx, s.top, "update-ref", "-m", "agent-tools: before job "+job, ref, commit); err != nil {
		return "", "", err
	}
	return ref, commit, nil
}

// uncommittedPaths are the paths whose content in s differs from HEAD's
// (the user's uncommitted work), top-relative.
func (g git) uncommittedPaths(ctx context.Context, s *snapshot) ([]string, error) {
	base := s.head
	if base == "" {
		base = emptyTree
	}
	out, err := g.run(ctx, s.top, "diff-tree", "-r", "-z", "--name-only", "--no-renames", base, s.tree)
	if err != nil {
		return nil, err
	}
	return nulPaths(out), nil
}

// changedBetween are the paths that differ between two trees, top-relative.
func (g git) changedBetween(ctx context.Context, dir, a, b string) ([]string, error) {
	if a == b {
		return nil, nil
	}
	out, err := g.run(ctx, dir, "diff-tree", "-r", "-z", "--name-only", "--no-renames", a, b)
	if err != nil {
		return nil, err
	}
	return nulPaths(out), nil
}

// worktree is an isolated checkout for one implement job.
type worktree struct {
	dir    string
	base   string // the commit checked out
	gitDir string // the worktree's own git dir
}

// addWorktree checks out HEAD of the repository at dir into a new detached
// worktree under parent; the project root's frame is kept (same prefix).
// --no-checkout then a checkout with the pinned git: the worker has not run
// yet, but the user's config may still name filters.
func (g git) addWorktree(ctx context.Context, s *snapshot, parent string) (*worktree, string, error) {
	if s.head == "" {
		return nil, "", fmt.Errorf("isolation needs at least one commit")
	}
	dir := filepath.Join(parent, "worktree")
	if _, err := g.run(ctx, s.top, "worktree", "add", "--detach", "--quiet", dir, s.head); err != nil {
		return nil, "", err
	}
	wt := &worktree{dir: dir, base: s.head}
	out, err := newGit(g.env).run(ctx, dir, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return nil, "", err
	}
	wt.gitDir = strings.TrimSpace(string(out))
	projectDir := dir
	if s.prefix != "" {
		projectDir = filepath.Join(dir, filepath.FromSlash(s.prefix))
	}
	return wt, projectDir, nil
}

// worktreeDiff returns the binary diff of the worktree's content (by a
// fresh index, as snapshots do) from its base, and the changed paths
// (top-relative).
func (g git) worktreeDiff(ctx context.Context, w *worktree, scratch string) (string, []string, error) {
	gw, err := g.pin(ctx, w.gitDir, w.dir)
	if err != nil {
		return "", nil, err
	}
	tree, err := gw.contentTree(ctx, w.dir, w.base, scratch)
	if err != nil {
		return "", nil, err
	}
	paths, err := gw.changedBetween(ctx, w.dir, w.base+"^{tree}", tree)
	if err != nil {
		return "", nil, err
	}
	if len(paths) == 0 {
		return "", nil, nil
	}
	d, err := gw.run(ctx, w.dir, "diff", "--binary", "--no-renames", w.base+"^{tree}", tree)
	if err != nil {
		return "", nil, err
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
