package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// With server.redis set and Redis down, `pins list` says that the shared
// store is unreachable and fails, instead of "no pinned definitions".
func TestPinsListWithTheSharedStoreDown(t *testing.T) {
	state := t.TempDir()
	for _, args := range [][]string{{"pins", "list"}, {"pins", "list", "--json"}} {
		env, out, errb := testEnv(t, map[string]string{"XDG_STATE_HOME": state, "AGENT_TOOLS_CLUSTER_KEY": "pins-test-cluster-key-0123456789abcdef"})
		mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("server:\n  redis: {url: \"redis://127.0.0.1:1/0\"}\n"), 0o644)
		code := Run(context.Background(), env, args)
		if code == ExitOK || strings.Contains(out.String(), "no pinned definitions") ||
			!strings.Contains(errb.String(), "shared store (server.redis) is unreachable") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out.String(), errb.String())
		}
	}
}
