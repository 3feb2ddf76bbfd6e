package proc

import (
	"runtime"
	"slices"
	"sort"
	"strings"
)

// hostVars are what a child of an mcp or cli provider inherits from the
// host, with every LC_* (the list docs/providers/cli.md gives): enough to
// find programs and keep the locale, without leaking the host's secrets.
var hostVars = []string{"PATH", "HOME", "LANG", "TMPDIR", "TZ"}

// windowsHostVars are what a Windows child needs besides: without
// SystemRoot and the profile folders much fails (Winsock, node's npx), and
// PATHEXT is how npx finds npx.cmd. Matched case-insensitively, as Windows
// does.
var windowsHostVars = []string{"PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "USERPROFILE",
	"HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)",
	"TEMP", "TMP", "USERNAME", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE"}

// inherited reports whether the host variable k reaches a child on goos.
func inherited(k, goos string) bool {
	if strings.HasPrefix(k, "LC_") || slices.Contains(hostVars, k) {
		return true
	}
	if goos != "windows" {
		return false
	}
	return slices.ContainsFunc(append(hostVars, windowsHostVars...), func(h string) bool { return strings.EqualFold(h, k) })
}

// MinimalEnv is the environment of a child that must not see the host's
// secrets: PATH, HOME, the locale, TMPDIR and TZ from host, plus extra (the
// provider's configured env, which wins). Never the whole host environment:
// a secret reaches a program only when its config names it. The result is
// sorted, so it is deterministic. On Windows the variables Windows programs
// need are inherited too (windowsHostVars).
func MinimalEnv(host []string, extra map[string]string) []string {
	return minimalEnv(host, extra, runtime.GOOS)
}

func minimalEnv(host []string, extra map[string]string, goos string) []string {
	m := map[string]string{}
	for _, kv := range host {
		k, v, ok := strings.Cut(kv, "=")
		if ok && inherited(k, goos) {
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
