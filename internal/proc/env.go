package proc

import (
	"slices"
	"sort"
	"strings"
)

// hostVars are what a child of an mcp or cli provider inherits from the
// host, with every LC_* (SPEC §7).
var hostVars = []string{"PATH", "HOME", "LANG", "TMPDIR", "TZ"}

// MinimalEnv is the environment of a child that must not see the host's
// secrets: PATH, HOME, the locale, TMPDIR and TZ from host, plus extra (the
// provider's configured env, which wins). Never the whole host environment:
// a secret reaches a program only when its config names it. The result is
// sorted, so it is deterministic.
func MinimalEnv(host []string, extra map[string]string) []string {
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
