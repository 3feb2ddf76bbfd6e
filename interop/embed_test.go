//go:build unix

package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestTSSDKSeesPluginToggles: the embedded booking example (examples/booking)
// serves /mcp; the official TypeScript SDK connected over Streamable HTTP
// sees tools disappear and reappear, each time after a
// notifications/tools/list_changed, as the control endpoint toggles the
// clients plugin.
func TestTSSDKSeesPluginToggles(t *testing.T) {
	requirePeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "booking")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/agent-tools/agent-tools/examples/booking")
	build.Dir = interopDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/booking: %v\n%s", err, out)
	}
	base := startBooking(ctx, t, bin)

	node := peerCommand(ctx, interopDir, "node", filepath.Join(interopDir, "ts-listchanged.mjs"), base+"/mcp", "2")
	stdout, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testutil.SyncBuffer
	node.Stderr = &stderr
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = node.Cancel(); _ = node.Wait() }() // killed: Wait reports the signal
	lines := bufio.NewScanner(stdout)
	next := func() []string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("ts-listchanged ended early; stderr:\n%s", stderr.String())
		}
		var step struct {
			Step  string   `json:"step"`
			Tools []string `json:"tools"`
			Fatal string   `json:"fatal"`
		}
		if err := json.Unmarshal(lines.Bytes(), &step); err != nil || step.Fatal != "" {
			t.Fatalf("ts-listchanged: %s (%v)\nstderr:\n%s", lines.Text(), err, stderr.String())
		}
		return step.Tools
	}
	toggle := func(on bool) {
		t.Helper()
		body := `{"enabled":false}`
		if on {
			body = `{"enabled":true}`
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, base+"/api/v1/control/plugins/clients", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT control/plugins/clients %s: %d", body, resp.StatusCode)
		}
	}

	tools := next()
	if !slices.Contains(tools, "clients_list") || !slices.Contains(tools, "booking_create") {
		t.Fatalf("at start: %v", tools)
	}
	toggle(false)
	if tools := next(); slices.Contains(tools, "clients_list") || !slices.Contains(tools, "booking_create") {
		t.Fatalf("after disabling clients: %v", tools)
	}
	toggle(true)
	if tools := next(); !slices.Contains(tools, "clients_list") {
		t.Fatalf("after enabling clients: %v", tools)
	}
	if err := node.Wait(); err != nil {
		t.Fatalf("ts-listchanged: %v\n%s", err, stderr.String())
	}
}

// startBooking runs the booking binary on a free loopback port and returns
// its base URL, read from its start-up log line.
func startBooking(ctx context.Context, t *testing.T, bin string) string {
	t.Helper()
	cmd := peerCommand(ctx, t.TempDir(), bin, "--addr", "127.0.0.1:0")
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // no BOOKING_TOKEN: loopback without auth
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Cancel(); _ = cmd.Wait() }) // killed: Wait reports the signal
	re := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
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
		t.Fatal("the booking example never logged its URL")
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return ""
}
