package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// minimalEnv is the child's environment (proc.MinimalEnv: PATH, HOME,
// locale, TMPDIR and TZ from the host, plus the config's env).
func minimalEnv(host []string, extra map[string]string) []string { return proc.MinimalEnv(host, extra) }

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
