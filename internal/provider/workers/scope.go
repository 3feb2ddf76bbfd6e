package workers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// errOutside is wrapped by every rejection of NormalizePath.
var errOutside = errors.New("path outside the project")

// NormalizePath turns a request path into a clean, slash-separated path
// relative to root ("." is the root itself). It rejects, before any process
// starts: empty paths, NUL bytes, drive letters and UNC paths, any ".."
// component, absolute paths outside root, and paths that a symbolic link
// (anywhere along the existing part of the path) carries out of the root.
// root must be absolute and clean.
func NormalizePath(root, p string) (string, error) {
	rel, err := normalizeLexical(root, p)
	if err != nil {
		return "", err
	}
	if err := noSymlinkEscape(root, filepath.Join(root, filepath.FromSlash(rel))); err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return rel, nil
}

// normalizeLexical is NormalizePath without the file system (no symlinks).
func normalizeLexical(root, p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("empty path: %w", errOutside)
	case strings.ContainsRune(p, 0):
		return "", fmt.Errorf("path contains a NUL byte: %w", errOutside)
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]), strings.HasPrefix(p, `\\`), strings.HasPrefix(p, "//"):
		return "", fmt.Errorf("%q names another drive or host: %w", p, errOutside)
	}
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", fmt.Errorf("%q uses \"..\": %w", p, errOutside)
		}
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(root, p)
	}
	abs = filepath.Clean(abs)
	rel, ok := within(root, abs)
	if !ok {
		return "", fmt.Errorf("%q is outside the project root: %w", p, errOutside)
	}
	return rel, nil
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// within reports abs relative to root when it is root or below it.
func within(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// noSymlinkEscape resolves the longest existing prefix of abs and checks it
// stays inside the (resolved) root.
func noSymlinkEscape(root, abs string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("project root: %w", err)
	}
	existing, rest := abs, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return nil
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("resolving symlinks: %w", errOutside)
	}
	if _, ok := within(realRoot, filepath.Join(real, rest)); !ok {
		return fmt.Errorf("a symbolic link leads out of the project root: %w", errOutside)
	}
	return nil
}

// covers reports whether scope (a normalised path) contains p.
func covers(scope, p string) bool {
	return scope == "." || p == scope || strings.HasPrefix(p, scope+"/")
}

// overlap reports whether two normalised scopes share any path.
func overlap(a, b string) bool { return covers(a, b) || covers(b, a) }

// inScope reports whether p may be written: inside some allowed path and
// inside no no_touch path.
func inScope(p string, allowed, noTouch []string) bool {
	if slices.ContainsFunc(noTouch, func(s string) bool { return covers(s, p) }) {
		return false
	}
	return slices.ContainsFunc(allowed, func(s string) bool { return covers(s, p) })
}

// scopeLocks is the in-memory registry of active write scopes: one entry per
// running implement job. analyze and review jobs never enter it.
type scopeLocks struct {
	mu   sync.Mutex
	held map[string][]string // job id → its scopes
	// history keeps recent scopes (write scopes, and read-only jobs in the
	// tree) with their lifetimes, so that a result can name the jobs that
	// ran beside it.
	history []heldScope
	// exclusive is the implement job that has a non-isolated tree to
	// itself; shared are the read-only jobs in it (enterTree).
	exclusive string
	shared    map[string]bool
}

type heldScope struct {
	job        string
	scopes     []string
	start, end time.Time // end zero while held
}

// historyMax bounds the history of released scopes.
const historyMax = 256

// conflict names the job holding an overlapping scope.
type conflict struct {
	Holder       string   `json:"holder"`
	HolderScopes []string `json:"holder_scopes"`
	Overlapping  []string `json:"overlapping"`
}

// acquire reserves scopes for job, or reports the first holder in conflict
// (jobs are compared in id order so the answer is deterministic).
func (l *scopeLocks) acquire(job string, scopes []string) (release func(), c *conflict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.held))
	for id := range l.held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		var over []string
		for _, s := range scopes {
			if slices.ContainsFunc(l.held[id], func(h string) bool { return overlap(h, s) }) {
				over = append(over, s)
			}
		}
		if len(over) > 0 {
			return nil, &conflict{Holder: id, HolderScopes: slices.Clone(l.held[id]), Overlapping: over}
		}
	}
	if l.held == nil {
		l.held = map[string][]string{}
	}
	l.held[job] = slices.Clone(scopes)
	l.history = append(l.history, heldScope{job: job, scopes: slices.Clone(scopes), start: time.Now()})
	if len(l.history) > historyMax {
		l.history = slices.Delete(l.history, 0, len(l.history)-historyMax)
	}
	return func() {
		l.mu.Lock()
		delete(l.held, job)
		for i := range l.history {
			if l.history[i].job == job {
				l.history[i].end = time.Now()
			}
		}
		l.mu.Unlock()
	}, nil
}

// concurrent returns the write scopes of other jobs that were held at some
// point between from and now.
func (l *scopeLocks) concurrent(self string, from time.Time) map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for _, h := range l.history {
		if h.job != self && (h.end.IsZero() || h.end.After(from)) {
			out[h.job] = h.scopes
		}
	}
	return out
}

// snapshot returns the active scopes by job id.
func (l *scopeLocks) snapshot() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]string, len(l.held))
	for k, v := range l.held {
		out[k] = slices.Clone(v)
	}
	return out
}

// linkOut reports whether rel (project-relative) is a symbolic link whose
// target, resolved against the project, lies outside root; target is where
// it points.
func linkOut(root, rel string) (target string, out bool) {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(abs)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return "", false
	}
	target, _ = os.Readlink(abs)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return target, true
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// Dangling: where a write through it would create the file.
		resolved = target
		if !filepath.IsAbs(resolved) {
			resolved = filepath.Join(filepath.Dir(abs), resolved)
		}
		if r, err := filepath.EvalSymlinks(filepath.Dir(resolved)); err == nil {
			resolved = filepath.Join(r, filepath.Base(resolved))
		}
	}
	_, in := within(realRoot, filepath.Clean(resolved))
	return target, !in
}

// link is a symbolic link found under a scope.
type link struct{ path, target string }

// linksOutMax bounds how many entries linksOut looks at.
const linksOutMax = 20000

// linksOut lists the symbolic links under the scopes (project-relative)
// that lead out of root; .git is skipped and the walk is bounded.
func linksOut(root string, scopes []string) []link {
	var out []link
	n := 0
	for _, sc := range scopes {
		_ = filepath.WalkDir(filepath.Join(root, filepath.FromSlash(sc)), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n++; n > linksOutMax {
				return filepath.SkipAll
			}
			if e.IsDir() && e.Name() == ".git" {
				return filepath.SkipDir
			}
			if e.Type()&fs.ModeSymlink != 0 {
				rel, ok := within(root, p)
				if !ok {
					return nil
				}
				if target, out2 := linkOut(root, rel); out2 {
					out = append(out, link{rel, target})
				}
			}
			return nil
		})
	}
	return out
}

// enterTree admits a job to the (non-isolated) work tree: an implement job
// (exclusive) needs it to itself, read-only jobs share it. Without a way to
// tell which process wrote a file, two jobs writing in one tree could not be
// told apart, so they do not run together. It returns the job in the way,
// or a release func.
func (l *scopeLocks) enterTree(job string, exclusive bool) (release func(), holder string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exclusive != "" {
		return nil, l.exclusive
	}
	if exclusive && len(l.shared) > 0 {
		ids := make([]string, 0, len(l.shared))
		for id := range l.shared {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return nil, ids[0]
	}
	if exclusive {
		l.exclusive = job
	} else {
		if l.shared == nil {
			l.shared = map[string]bool{}
		}
		l.shared[job] = true
		l.history = append(l.history, heldScope{job: job, start: time.Now()})
		if len(l.history) > historyMax {
			l.history = slices.Delete(l.history, 0, len(l.history)-historyMax)
		}
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if exclusive {
			l.exclusive = ""
			return
		}
		delete(l.shared, job)
		for i := range l.history {
			if l.history[i].job == job && l.history[i].end.IsZero() {
				l.history[i].end = time.Now()
			}
		}
	}, ""
}
