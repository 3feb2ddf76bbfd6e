package proc

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// LookPath resolves name as Run does: a name with a path separator is
// returned as is (relative to the child's directory when relative); a bare
// name is looked up in the PATH of env (the child's, not this process's),
// absolute entries only, so "." never counts. On Windows the variable's
// name is matched case-insensitively (Path) and a name without one of the
// PATHEXT extensions (default .COM;.EXE;.BAT;.CMD) is tried with each, so
// "npx" finds npx.cmd.
func LookPath(name string, env []string) (string, error) {
	return lookPath(name, env, runtime.GOOS, isExecutable)
}

// lookPath is LookPath for goos, with the file check given (tests run the
// Windows rules on any system).
func lookPath(name string, env []string, goos string, isExec func(path string, windows bool) bool) (string, error) {
	windows := goos == "windows"
	if name == "" {
		return "", fmt.Errorf("proc: cannot start: empty path: %w", fs.ErrNotExist)
	}
	seps := "/"
	if windows {
		seps = `/\:`
	}
	if strings.ContainsAny(name, seps) {
		return name, nil
	}
	pathEnv := envValue(env, "PATH", windows)
	var exts []string
	if windows {
		exts = pathExts(envValue(env, "PATHEXT", true))
	}
	for _, dir := range splitList(pathEnv, windows) {
		if !isAbs(dir, windows) {
			continue // never resolve through "." or relative entries
		}
		for _, cand := range candidates(name, exts, windows) {
			p := joinPath(dir, cand, windows)
			if isExec(p, windows) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("proc: cannot start %s: %w in PATH %q", name, exec.ErrNotFound, pathEnv)
}

// envValue is the last value of key in env (the one the child sees);
// Windows names are case-insensitive.
func envValue(env []string, key string, windows bool) string {
	v := ""
	for _, kv := range env {
		k, val, ok := strings.Cut(kv, "=")
		if ok && (k == key || windows && strings.EqualFold(k, key)) {
			v = val
		}
	}
	return v
}

// pathExts is PATHEXT as a list of lower-case extensions, or its default.
func pathExts(v string) []string {
	var exts []string
	for _, e := range strings.Split(strings.ToLower(v), ";") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		exts = append(exts, e)
	}
	if len(exts) == 0 {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}

// candidates are the file names tried for name: on Windows a name that has
// one of exts is tried as is, any other with each of exts appended.
func candidates(name string, exts []string, windows bool) []string {
	if !windows {
		return []string{name}
	}
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range exts {
		if ext == e {
			return []string{name}
		}
	}
	out := make([]string, len(exts))
	for i, e := range exts {
		out[i] = name + e
	}
	return out
}

// splitList is filepath.SplitList for goos: ";" on Windows, where an entry
// may be quoted ("C:\a;b").
func splitList(path string, windows bool) []string {
	if !windows {
		return filepath.SplitList(path)
	}
	var out []string
	start, quoted := 0, false
	for i := 0; i <= len(path); i++ {
		switch {
		case i < len(path) && path[i] == '"':
			quoted = !quoted
		case i == len(path) || path[i] == ';' && !quoted:
			out = append(out, strings.ReplaceAll(path[start:i], `"`, ""))
			start = i + 1
		}
	}
	return out
}

func isAbs(dir string, windows bool) bool {
	if !windows {
		return filepath.IsAbs(dir)
	}
	// C:\dir or \\server\share (filepath.IsAbs of the host may not know them).
	if len(dir) >= 3 && dir[1] == ':' && (dir[2] == '\\' || dir[2] == '/') {
		return true
	}
	return strings.HasPrefix(dir, `\\`)
}

func joinPath(dir, name string, windows bool) string {
	if !windows {
		return filepath.Join(dir, name)
	}
	return strings.TrimRight(dir, `\/`) + `\` + name
}

// isExecutable: a regular file, with an execute bit on Unix (Windows runs
// by extension).
func isExecutable(p string, windows bool) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return windows || fi.Mode().Perm()&0o111 != 0
}
