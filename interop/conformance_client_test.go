//go:build unix

package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConformanceClient runs the official MCP conformance suite's client
// scenarios (initialize, tools_call, elicitation defaults, SSE retry and
// every auth/* scenario: discovery, registration, PKCE, scopes, step-up,
// token endpoint auth, client credentials, the 2025-03-26 fallbacks) against
// interop/conformance-client, which drives one HTTP upstream through the
// runtime's own mcp provider and upstreamauth code. Each spec version the
// suite knows is run on its own, so the log reports them separately; a
// FAILURE or a WARNING in any fails the test (no scenario is exempt).
func TestConformanceClient(t *testing.T) {
	requirePeers(t)
	node, suite := conformancePeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	bin := filepath.Join(t.TempDir(), "conformance-client")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./interop/conformance-client")
	build.Dir = filepath.Dir(interopDir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the conformance client: %v\n%s", err, out)
	}
	for _, v := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "extension", "draft"} {
		t.Run(v, func(t *testing.T) {
			cmd := peerCommand(ctx, interopDir, node, suite, "client", "--command", bin, "--suite", "all", "--spec-version", v)
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"XDG_STATE_HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			summary := string(out)
			if i := strings.Index(summary, "=== SUITE SUMMARY ==="); i >= 0 {
				summary = summary[i:]
			}
			t.Logf("spec version %s:\n%s", v, summary)
			if err != nil {
				t.Fatalf("conformance client scenarios of %s failed: %v\n%s", v, err, out)
			}
			if m := regexp.MustCompile(`Total: \d+ passed, (\d+) failed, (\d+) warnings`).FindStringSubmatch(summary); m == nil {
				t.Fatalf("no suite summary for %s:\n%s", v, out)
			} else if m[2] != "0" {
				t.Fatalf("%s: %s warnings", v, m[2])
			}
		})
	}
}
