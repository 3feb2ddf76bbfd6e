package cli

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

func testEnv(t *testing.T, vars map[string]string) (*Env, *testutil.SyncBuffer, *testutil.SyncBuffer) {
	t.Helper()
	out, errb := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	return &Env{
		Stdin: strings.NewReader(""), Stdout: out, Stderr: errb, Dir: t.TempDir(),
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
	}, out, errb
}

// mustWrite writes a test's file (a config, a script) or fails the test:
// without the file, the test would check the wrong setup.
func mustWrite(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// TestServeHTTPRefusesPublicWithoutAuth: a non-loopback address without
// inbound auth is a configuration error (exit 2) that says how to fix it.
func TestServeHTTPRefusesPublicWithoutAuth(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":8321"} {
		env, _, stderr := testEnv(t, nil)
		code := Run(context.Background(), env, []string{"serve", "--http", "--addr", addr})
		msg := stderr.String()
		if code != ExitUsage || !strings.Contains(msg, "refusing to serve "+addr+" without authentication") ||
			!strings.Contains(msg, `tokens: ["${AGENT_TOOLS_TOKEN}"]`) || !strings.Contains(msg, "--insecure-no-auth") {
			t.Errorf("%s: exit %d\n%s", addr, code, msg)
		}
	}
	// The config's address counts too.
	env, _, stderr := testEnv(t, nil)
	mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("server:\n  http:\n    addr: 0.0.0.0:0\n"), 0o644)
	if code := Run(context.Background(), env, []string{"serve", "--http"}); code != ExitUsage || !strings.Contains(stderr.String(), "refusing") {
		t.Errorf("config addr: exit %d\n%s", code, stderr)
	}
}

func TestServeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0"},
		{"serve", "--stateless"},
		{"serve", "--insecure-no-auth"},
		{"serve", "--no-ui"},
		{"serve", "--log-level", "loud"},
		{"serve", "--http", "--addr", "nohostport"},
		{"serve", "extra"},
	} {
		env, _, stderr := testEnv(t, nil)
		if code := Run(context.Background(), env, args); code != ExitUsage {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}

// TestServeHTTPEndToEnd runs `serve --http` with a bearer token from the
// environment, lists and calls a tool with the go-sdk client, reads the
// metrics, and shuts down on cancel.
func TestServeHTTPEndToEnd(t *testing.T) {
	env, _, stderr := testEnv(t, map[string]string{"TOK": "e2e-secret-token"})
	mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("mode: flat\nserver:\n  http:\n    tokens: [\"${TOK}\"]\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, env, []string{"serve", "--http", "--addr", "127.0.0.1:0", "--log-level", "debug"})
	}()
	re := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/mcp`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no listening line:\n%s", stderr)
	}
	hc := &http.Client{Transport: authRT{"e2e-secret-token"}}
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := cs.ListTools(ctx, nil)
	found := false
	for _, tl := range lt.Tools {
		found = found || tl.Name == "runtime_status"
	}
	if err != nil || !found {
		t.Fatalf("list: %v %+v", err, lt)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "runtime_status"})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	cs.Close()

	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("metrics without token: %d", resp.StatusCode)
	}
	resp, err = hc.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `agent_tools_tool_calls_total{outcome="ok",profile="default",provider="builtin",tool="runtime_status"} 1`) ||
		!strings.Contains(string(body), `agent_tools_provider_up{kind="builtin",provider="builtin"} 1`) {
		t.Errorf("metrics:\n%s", body)
	}

	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	logs := stderr.String()
	if strings.Contains(logs, "e2e-secret-token") || !strings.Contains(logs, "shut down") || !strings.Contains(logs, `auth="bearer tokens"`) {
		t.Errorf("logs:\n%s", logs)
	}
}

type authRT struct{ tok string }

func (a authRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.tok)
	return http.DefaultTransport.RoundTrip(r)
}
