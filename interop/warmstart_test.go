//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestNPMEverythingWarmStart checks the warm start against a real upstream:
// with one tool-list cache (XDG_CACHE_HOME) for every command, list → call
// → list → serve (its first call) → list, counting server-everything's
// tools each time. A call after a warm start used to rewrite the cache with
// "tools":null, and every later command saw no tools at all.
func TestNPMEverythingWarmStart(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	project := t.TempDir()
	cache := t.TempDir()
	config := fmt.Sprintf(`providers:
  - id: ev
    kind: mcp
    command: %q
    args: [%q, stdio]
    readonly: [echo, get-sum]
`, nodePath(t), npmServer("server-everything"))
	if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binPath, args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agent-tools %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	count := func(step string) int {
		t.Helper()
		var tools []struct {
			Provider string `json:"provider"`
		}
		out := run("list", "--json")
		if err := json.Unmarshal([]byte(out), &tools); err != nil {
			t.Fatalf("%s: list --json: %v\n%s", step, err, out)
		}
		n := 0
		for _, tl := range tools {
			if tl.Provider == "ev" {
				n++
			}
		}
		if n == 0 {
			t.Fatalf("%s: no ev tools listed", step)
		}
		return n
	}
	want := count("list (cold)")
	if out := run("call", "ev_echo", "--args", `{"message":"hi"}`); !strings.Contains(out, "hi") {
		t.Fatalf("call ev_echo: %s", out)
	}
	if n := count("list after a call"); n != want {
		t.Errorf("list after a call: %d ev tools, want %d", n, want)
	}

	// serve with the same cache: its first call starts the upstream (a warm
	// start), and the tools are still there afterwards.
	cmd := exec.Command(binPath, "serve")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	s := connectServe(t, cmd)
	wantOK(t, "serve: ev echo", s.callVia(t, "ev", "echo", map[string]any{"message": "hi"}, false), "hi")
	s.cs.Close()
	if n := count("list after serve"); n != want {
		t.Errorf("list after serve: %d ev tools, want %d", n, want)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "agent-tools", "mcp", "ev-*.json"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if strings.Contains(string(data), `"tools":null`) {
			t.Errorf("%s holds no tools", f)
		}
	}
}

// connectServe connects a Go SDK client to cmd (`agent-tools serve`).
func connectServe(t *testing.T, cmd *exec.Cmd) *served {
	t.Helper()
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "interop-go-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to agent-tools serve: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("agent-tools serve stderr:\n%s", stderr.String())
		}
	})
	return &served{cs: cs, cmd: cmd, stderr: stderr}
}
