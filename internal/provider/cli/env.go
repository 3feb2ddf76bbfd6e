package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// hostVars are what a child inherits from the host, with every LC_*.
// (internal/provider/mcp keeps its own copy of this rule; a shared helper
// would cross into that package for six lines.)
var hostVars = []string{"PATH", "HOME", "LANG", "TMPDIR", "TZ"}

// minimalEnv is the child's environment: PATH, HOME, locale, TMPDIR and TZ
// from the host, plus the config's env (which wins). Never the whole host
// environment: a secret reaches a program only when its config names it.
func minimalEnv(host []string, extra map[string]string) []string {
	m := map[string]string{}
	for _, kv := range host {
		k, v, ok := strings.Cut(kv, "=")
		if ok && (strings.HasPrefix(k, "LC_") || slices.Contains(hostVars, k)) {
			m[k] = v
		}
	}
	for k, v := range extra {
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if s, ok := strings.CutPrefix(kv, key+"="); ok {
			v = s
		}
	}
	return v
}

// errNotFound is a program that is not where it was looked for.
var errNotFound = errors.New("not found")

// lookPath resolves an allowed program: a name without a slash in PATH's
// absolute directories (so "." never counts), a path relative to base.
func lookPath(name, pathEnv, base string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q %w in PATH", name, errNotFound)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errNotFound
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Mode().Perm()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}
