package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/cli"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

func TestMain(m *testing.M) {
	jsrun.MaybeChild() // execute_javascript's scripts run in children of this binary
	if mode := os.Getenv("FAULTS_UPSTREAM"); mode != "" {
		runUpstream(mode)
		os.Exit(0)
	}
	code := testutil.RunIsolated(m) // the upstreams' tool-list caches out of the user's
	if testing.Verbose() {
		printTable()
	}
	os.Exit(code)
}

// canaries are the secret values the config interpolates. None of them may
// appear in any output; each is long and unique so a partial leak shows too.
var canaries = map[string]string{
	"FAULTS_ENV_SECRET": "canary-env-7Qm2xP9kL4",
	"FAULTS_ARG_SECRET": "canary-arg-3Vt8nR1wZ6",
	"FAULTS_HDR_SECRET": "canary-hdr-5Jc0yH7sE2",
	"FAULTS_Q_SECRET":   "canary-qry-9Bd4uF6gT1",
	"FAULTS_SEG_SECRET": "canary-seg-2Lx5aN8vK3",
	"FAULTS_PASS":       "canary-pwd-6Ye1oW4rM9",
}

// row is one line of the suite's table.
type row struct {
	name    string
	tries   int
	outcome string
}

var (
	tableMu sync.Mutex
	table   []row
)

func record(name string, tries int, outcome string) {
	tableMu.Lock()
	defer tableMu.Unlock()
	table = append(table, row{name, tries, outcome})
}

func printTable() {
	tableMu.Lock()
	defer tableMu.Unlock()
	fmt.Println("| Case | Tries | Outcome |")
	fmt.Println("|---|---:|---|")
	for _, r := range table {
		fmt.Printf("| %s | %d | %s |\n", r.name, r.tries, r.outcome)
	}
}

// syncBuf is a goroutine-safe buffer (stderr of the runtime).
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// project is a directory with agent-tools.yaml, scripts and a pid log.
type project struct {
	dir, config, audit string
	web                *httptest.Server
}

const scripts = `
probe=#!/bin/sh
# @description Sleep a little, then print a line naming our pid.
sleep 0.2
echo probe-ok-$$
--
background=#!/bin/sh
# @description Leave a background job in our own process group.
sleep 1000 &
echo $! >> "$FAULTS_DIR/pids"
echo started
--
detached=#!/bin/sh
# @description Leave a setsid child that keeps our stdout open.
setsid sleep 1000 &
echo $! >> "$FAULTS_DIR/pids"
echo started
--
slow=#!/bin/sh
# @description Outlive the deadline with a setsid child.
# @timeout 1s
setsid sleep 1000 &
echo $! >> "$FAULTS_DIR/pids"
sleep 1000
`

// newProject writes the config naming every fake upstream.
func newProject(t *testing.T) *project {
	t.Helper()
	dir := t.TempDir()
	p := &project{dir: dir, config: filepath.Join(dir, "agent-tools.yaml"), audit: filepath.Join(dir, "audit.jsonl")}
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range strings.Split(strings.TrimSpace(scripts), "\n--\n") {
		name, body, _ := strings.Cut(s, "=")
		if err := os.WriteFile(filepath.Join(tools, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.web = httptest.NewServer(headerEcho())
	t.Cleanup(p.web.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stdio := func(id, mode, timeout string) string {
		return fmt.Sprintf(`  - id: %s
    kind: mcp
    command: %q
    args: ["--token", "${FAULTS_ARG_SECRET}"]
    env: {FAULTS_UPSTREAM: %s, FAULTS_DIR: %q, API_KEY: "${FAULTS_ENV_SECRET}"}
    requireConfirm: false
    timeout: %s
`, id, exe, mode, dir, timeout)
	}
	cfg := "mode: flat\nlocal:\n  requireConfirm: false\nproviders:\n" +
		stdio("up", "sdk", "6s") + stdio("raw", "raw", "2s") + stdio("gone", "exit", "2s") + stdio("mute", "silent", "2s") +
		fmt.Sprintf(`  - id: web
    kind: mcp
    url: "%s/mcp?key=${FAULTS_Q_SECRET}"
    headers: {Authorization: "Bearer ${FAULTS_HDR_SECRET}"}
    requireConfirm: false
  - id: dead
    kind: mcp
    url: "http://user:${FAULTS_PASS}@127.0.0.1:1/mcp/${FAULTS_SEG_SECRET}?key=${FAULTS_Q_SECRET}"
    requireConfirm: false
audit:
  path: %q
`, p.web.URL, p.audit)
	if err := os.WriteFile(p.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAULTS_DIR", dir) // local scripts inherit the runtime's environment
	return p
}

func (p *project) env(stdin io.Reader, stdout, stderr io.Writer) *cli.Env {
	return &cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Dir: p.dir, LookupEnv: func(k string) (string, bool) {
		if v, ok := canaries[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	}}
}

// runtime is `agent-tools serve` running in process over stdio.
type runtime struct {
	t      *testing.T
	cs     *sdk.ClientSession
	stderr *syncBuf
	cancel context.CancelFunc
	done   chan int
	// texts collects every result and error text the client received.
	mu    sync.Mutex
	texts []string
}

func serve(t *testing.T, p *project) *runtime {
	t.Helper()
	return serveWith(t, p, nil)
}

// serveWith is serve with the client's session options (a protocol version).
func serveWith(t *testing.T, p *project, opts *sdk.ClientSessionOptions) *runtime {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &runtime{t: t, stderr: &syncBuf{}, cancel: cancel, done: make(chan int, 1)}
	go func() {
		code := cli.Run(ctx, p.env(inR, outW, r.stderr), []string{"serve", "--config", p.config, "--log-level", "debug"})
		outW.Close()
		r.done <- code
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "faults", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, opts)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v\n%s", err, r.stderr.String())
	}
	r.cs = cs
	t.Cleanup(func() { r.stop() })
	return r
}

// stop ends the runtime (as SIGTERM would) and waits for it.
func (r *runtime) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		r.t.Error("the runtime did not stop")
	}
}

// tool finds the flat name of a provider's tool (listing again until it
// appears: upstreams start in the background).
func (r *runtime) tool(suffix string) string {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := r.cs.ListTools(context.Background(), nil)
		if err != nil {
			r.t.Fatalf("tools/list: %v (the runtime must stay up)", err)
		}
		for _, tl := range res.Tools {
			if tl.Name == suffix || strings.HasSuffix(tl.Name, "_"+suffix) && strings.HasPrefix(tl.Name, strings.SplitN(suffix, "_", 2)[0]) {
				return tl.Name
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			r.t.Fatalf("no tool %q in %v", suffix, names)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// outcome is a call as the client saw it.
type outcome struct {
	text    string
	isError bool
	code    string
	message string
}

func (r *runtime) call(name string, timeout time.Duration) outcome {
	r.t.Helper()
	return r.callWith(name, timeout, map[string]any{})
}

func (r *runtime) callWith(name string, timeout time.Duration, args map[string]any) outcome {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := r.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		r.t.Fatalf("call %s: protocol error %v (want a tool result)", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	o := outcome{text: b.String(), isError: res.IsError}
	if o.isError {
		var env struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal([]byte(o.text), &env) == nil {
			o.code, o.message = env.Error.Code, env.Error.Message
		}
	}
	r.mu.Lock()
	r.texts = append(r.texts, o.text)
	r.mu.Unlock()
	return o
}

// alive proves the runtime still serves: a local script answers.
func (r *runtime) alive() {
	r.t.Helper()
	if o := r.call(r.tool("probe"), 30*time.Second); o.isError || !strings.HasPrefix(o.text, "probe-ok-") {
		r.t.Fatalf("the runtime no longer serves: %+v", o)
	}
}

// noCanary fails if any canary (or its URL-escaped or base64 form's stable
// part) appears in text.
func noCanary(t *testing.T, where, text string) {
	t.Helper()
	for name, v := range canaries {
		if strings.Contains(text, v) {
			i := strings.Index(text, v)
			t.Errorf("%s leaks %s: …%s…", where, name, text[max(0, i-80):min(len(text), i+len(v)+20)])
		}
	}
}

// pids are the processes the fake upstreams and scripts started.
func pids(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pids"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// gone reports whether pid no longer runs (absent or a zombie).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z' || b[i+2] == 'X'
	}
	return false
}

// survivors waits (bounded) for every pid to be gone and returns the rest,
// killing them so a failed run leaves nothing behind.
func survivors(pids []int) []int {
	deadline := time.Now().Add(5 * time.Second)
	var left []int
	for {
		left = left[:0]
		for _, p := range pids {
			if !gone(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range left {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return left
}

var codeRE = regexp.MustCompile(`^[A-Z_]+$`)

var runCLI = cli.Run
