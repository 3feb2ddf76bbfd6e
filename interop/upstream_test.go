//go:build unix

package interop

// Upstream interop: real MCP servers from npm, pinned in
// package.json, configured as `kind: mcp` providers of the freshly built
// binary, driven through `agent-tools serve` by the Go SDK's client:
//
//   - @modelcontextprotocol/server-everything over stdio and over its
//     Streamable HTTP mode (loopback only: loopback.mjs), and as a
//     transparent passthrough in flat mode (prefix ""): sampling,
//     elicitation, roots, progress, logging, prompts, completion, resources;
//   - @modelcontextprotocol/server-filesystem, confined to one directory;
//   - @modelcontextprotocol/server-memory.
//
// Each checks discover, call, confirmation of mutating tools, and a restart
// after the upstream is killed. The servers run on the Node on PATH (>= 20,
// what they need); their pinned versions are checked like the other peers.

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// npmServer is the entry point of a pinned server package.
func npmServer(name string) string {
	return filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", name, "dist", "index.js")
}

func nodePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	p, err = filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// served is `agent-tools serve` over stdio with a Go SDK client session.
type served struct {
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *testutil.SyncBuffer
}

// serveStdio writes config into a new project directory and starts the
// binary there (its tool-list cache in a temporary directory).
func serveStdio(t *testing.T, config string, opts *sdk.ClientOptions, roots ...*sdk.Root) (*served, string) {
	t.Helper()
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "serve", "--log-level", "info")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	stderr := &testutil.SyncBuffer{}
	cmd.Stderr = stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "interop-go-client", Version: "1"}, opts)
	client.AddRoots(roots...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to agent-tools serve: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("agent-tools serve stderr:\n%s", stderr.String())
		}
	})
	return &served{cs: cs, cmd: cmd, stderr: stderr}, project
}

func (s *served) call(t *testing.T, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// callVia calls a provider's tool through the progressive facade.
func (s *served) callVia(t *testing.T, provider, tool string, args map[string]any, confirm bool) *sdk.CallToolResult {
	t.Helper()
	a := map[string]any{"toolName": tool, "arguments": args}
	if confirm {
		a["confirm"] = true
	}
	return s.call(t, "agent_tools_"+provider+"_call", a)
}

func text(res *sdk.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// code is the error envelope's code of a failed result ("" when it succeeded).
func code(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		return ""
	}
	var env errorEnvelope
	if err := json.Unmarshal([]byte(text(res)), &env); err != nil || env.Error == nil {
		t.Fatalf("error result is not an envelope: %s", text(res))
	}
	c, _ := env.Error["code"].(string)
	return c
}

func wantOK(t *testing.T, what string, res *sdk.CallToolResult, contains string) {
	t.Helper()
	if res.IsError || !strings.Contains(text(res), contains) {
		t.Errorf("%s: isError=%v, want text containing %q; got %s", what, res.IsError, contains, text(res))
	}
}

func wantCode(t *testing.T, what string, res *sdk.CallToolResult, want string) {
	t.Helper()
	if got := code(t, res); got != want {
		t.Errorf("%s: error code %q, want %s; text: %s", what, got, want, text(res))
	}
}

// childPIDs returns the pids of ppid's children whose command line contains match.
func childPIDs(ppid int, match string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		rest := string(stat)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest) // state ppid ...
		if len(f) < 2 || f[1] != strconv.Itoa(ppid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), match) {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// killUpstream kills the one child of serve running match (its whole process
// group: the provider starts each upstream as a group leader) and returns its pid.
func killUpstream(t *testing.T, s *served, match string) int {
	t.Helper()
	pids := childPIDs(s.cmd.Process.Pid, match)
	if len(pids) != 1 {
		t.Fatalf("children of serve running %s: %v, want exactly one", match, pids)
	}
	if err := syscall.Kill(-pids[0], syscall.SIGKILL); err != nil {
		t.Fatalf("killing the upstream: %v", err)
	}
	return pids[0]
}

// eventuallyOK calls until the result is not an error (a restarting upstream
// answers PROVIDER_UNAVAILABLE meanwhile).
func eventuallyOK(t *testing.T, what string, call func() *sdk.CallToolResult) *sdk.CallToolResult {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := call()
		if !res.IsError {
			return res
		}
		if c := code(t, res); c != "PROVIDER_UNAVAILABLE" || time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, text(res))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestNPMServersStdio(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	node := nodePath(t)
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{allowed, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "notes.txt"), []byte("inside the allowed directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(dir, "memory.jsonl")
	config := fmt.Sprintf(`providers:
  - id: ev
    kind: mcp
    command: %[1]q
    args: [%[2]q, stdio]
    readonly: [echo, get-sum]
  - id: fs
    kind: mcp
    command: %[1]q
    args: [%[3]q, %[4]q]
    trustAnnotations: true
  - id: mem
    kind: mcp
    command: %[1]q
    args: [%[5]q]
    env: {MEMORY_FILE_PATH: %[6]q}
    readonly: [read_graph, search_nodes, open_nodes]
`, node, npmServer("server-everything"), npmServer("server-filesystem"), allowed, npmServer("server-memory"), memFile)
	s, _ := serveStdio(t, config, nil)

	t.Run("help lists the three upstreams", func(t *testing.T) {
		// Five providers (the built-ins, local and the three upstreams) are
		// more than progressive.groupAbove: help names each in one line,
		// "<id>: <description> (N tools)".
		res := s.call(t, "agent_tools_help", map[string]any{})
		var help struct {
			Providers []string `json:"providers"`
		}
		if err := json.Unmarshal([]byte(text(res)), &help); err != nil {
			t.Fatalf("help: %v: %s", err, text(res))
		}
		tools := regexp.MustCompile(`^([a-z]+): .*\((\d+) tools?\)$`)
		counts := map[string]int{}
		for _, p := range help.Providers {
			if m := tools.FindStringSubmatch(p); m != nil {
				counts[m[1]], _ = strconv.Atoi(m[2])
			}
		}
		for _, id := range []string{"ev", "fs", "mem"} {
			if counts[id] == 0 {
				t.Errorf("help: provider %s has no tools: %s", id, text(res))
			}
		}
	})

	t.Run("discover", func(t *testing.T) {
		for _, c := range []struct{ provider, query, want string }{
			{"ev", "echo back the input string", "echo"},
			{"fs", "read the complete contents of a text file", "read_text_file"},
			{"mem", "create entities in the knowledge graph", "create_entities"},
		} {
			res := s.call(t, "agent_tools_"+c.provider+"_discover", map[string]any{"query": c.query})
			var d struct {
				Results []struct {
					Name string `json:"name"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(text(res)), &d); err != nil || len(d.Results) == 0 {
				t.Fatalf("discover %s %q: %v %s", c.provider, c.query, err, text(res))
			}
			var top []string
			for _, r := range d.Results[:min(3, len(d.Results))] {
				top = append(top, r.Name)
			}
			if !slices.Contains(top, c.want) {
				t.Errorf("discover %s %q: top results %v lack %s", c.provider, c.query, top, c.want)
			}
		}
	})

	t.Run("everything: call and confirmation", func(t *testing.T) {
		wantOK(t, "echo", s.callVia(t, "ev", "echo", map[string]any{"message": "hi there"}, false), "Echo: hi there")
		wantOK(t, "get-sum", s.callVia(t, "ev", "get-sum", map[string]any{"a": 2, "b": 3}, false), "5")
		// Not listed read-only, and its annotations are not trusted: confirmation.
		wantCode(t, "get-env unconfirmed", s.callVia(t, "ev", "get-env", map[string]any{}, false), "CONFIRMATION_REQUIRED")
		res := s.callVia(t, "ev", "get-env", map[string]any{}, true)
		if res.IsError {
			t.Errorf("get-env confirmed: %s", text(res))
		}
		if strings.Contains(text(res), "XDG_CACHE_HOME") {
			t.Errorf("the upstream saw a host variable its config does not name: %s", text(res))
		}
	})

	t.Run("memory: confirmation, then the graph", func(t *testing.T) {
		entities := map[string]any{"entities": []any{map[string]any{"name": "Ada", "entityType": "person", "observations": []any{"wrote the first program"}}}}
		wantCode(t, "create_entities unconfirmed", s.callVia(t, "mem", "create_entities", entities, false), "CONFIRMATION_REQUIRED")
		if _, err := os.Stat(memFile); err == nil {
			t.Errorf("an unconfirmed create_entities wrote %s", memFile)
		}
		wantOK(t, "create_entities", s.callVia(t, "mem", "create_entities", entities, true), "Ada")
		wantOK(t, "read_graph", s.callVia(t, "mem", "read_graph", map[string]any{}, false), "wrote the first program")
		wantOK(t, "search_nodes", s.callVia(t, "mem", "search_nodes", map[string]any{"query": "program"}, false), "Ada")
		if _, err := os.Stat(memFile); err != nil {
			t.Errorf("memory file: %v", err)
		}
	})

	t.Run("filesystem: confined to its directory", func(t *testing.T) {
		// trustAnnotations: read_text_file says readOnlyHint, write_file destructiveHint.
		wantOK(t, "read inside", s.callVia(t, "fs", "read_text_file", map[string]any{"path": filepath.Join(allowed, "notes.txt")}, false), "inside the allowed directory")
		for _, p := range []string{secret, filepath.Join(allowed, "..", "outside", "secret.txt")} {
			res := s.callVia(t, "fs", "read_text_file", map[string]any{"path": p}, false)
			wantCode(t, "read "+p, res, "BACKEND_ERROR")
			if !strings.Contains(strings.ToLower(text(res)), "access denied") || strings.Contains(text(res), "TOP-SECRET-CONTENT") {
				t.Errorf("read %s: want access denied without the content; got %s", p, text(res))
			}
		}
		if err := os.Symlink(secret, filepath.Join(allowed, "link.txt")); err != nil {
			t.Fatal(err)
		}
		if res := s.callVia(t, "fs", "read_text_file", map[string]any{"path": filepath.Join(allowed, "link.txt")}, false); !res.IsError || strings.Contains(text(res), "TOP-SECRET-CONTENT") {
			t.Errorf("a symlink out of the allowed directory was followed: %s", text(res))
		}
		write := map[string]any{"path": filepath.Join(allowed, "new.txt"), "content": "written through agent-tools"}
		wantCode(t, "write unconfirmed", s.callVia(t, "fs", "write_file", write, false), "CONFIRMATION_REQUIRED")
		if _, err := os.Stat(filepath.Join(allowed, "new.txt")); err == nil {
			t.Error("an unconfirmed write_file wrote the file")
		}
		wantOK(t, "write confirmed", s.callVia(t, "fs", "write_file", write, true), "new.txt")
		if b, err := os.ReadFile(filepath.Join(allowed, "new.txt")); err != nil || string(b) != "written through agent-tools" {
			t.Errorf("written file: %q, %v", b, err)
		}
		outsideWrite := map[string]any{"path": filepath.Join(outside, "evil.txt"), "content": "x"}
		wantCode(t, "write outside", s.callVia(t, "fs", "write_file", outsideWrite, true), "BACKEND_ERROR")
		if _, err := os.Stat(filepath.Join(outside, "evil.txt")); err == nil {
			t.Error("the filesystem server wrote outside its directory")
		}
	})

	t.Run("restart after the child is killed", func(t *testing.T) {
		for _, c := range []struct{ provider, match, tool string }{
			{"ev", "server-everything", "echo"},
			{"mem", "server-memory", "read_graph"},
		} {
			old := killUpstream(t, s, c.match)
			args := map[string]any{}
			if c.tool == "echo" {
				args["message"] = "again"
			}
			eventuallyOK(t, c.provider+" after the kill", func() *sdk.CallToolResult {
				return s.callVia(t, c.provider, c.tool, args, false)
			})
			if pids := childPIDs(s.cmd.Process.Pid, c.match); len(pids) != 1 || pids[0] == old {
				t.Errorf("%s: children after the restart %v (killed %d)", c.provider, pids, old)
			}
		}
		// The memory survived its server's death (it is on disk).
		wantOK(t, "read_graph after the restart", s.callVia(t, "mem", "read_graph", map[string]any{}, false), "Ada")
	})
}

// freePort reserves a loopback port for a server the test starts.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEverythingHTTP runs server-everything's Streamable HTTP mode on port,
// loopback only, until the test ends (or the returned stop is called).
func startEverythingHTTP(t *testing.T, port int) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := peerCommand(ctx, interopDir, nodePath(t), "--import", filepath.Join(interopDir, "loopback.mjs"), npmServer("server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	out := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			_ = cmd.Wait() // cancelled: its exit status is the signal
		})
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return stop
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything never listened on %d:\n%s", port, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestNPMEverythingStreamableHTTP(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	port := freePort(t)
	stop := startEverythingHTTP(t, port)
	config := fmt.Sprintf(`providers:
  - id: evh
    kind: mcp
    url: http://127.0.0.1:%d/mcp
    readonly: [echo]
`, port)
	s, _ := serveStdio(t, config, nil)

	res := s.call(t, "agent_tools_evh_discover", map[string]any{"query": "sum of two numbers"})
	if !strings.Contains(text(res), `"get-sum"`) {
		t.Errorf("discover over HTTP: %s", text(res))
	}
	wantOK(t, "echo over HTTP", s.callVia(t, "evh", "echo", map[string]any{"message": "over http"}, false), "Echo: over http")
	wantCode(t, "get-sum unconfirmed", s.callVia(t, "evh", "get-sum", map[string]any{"a": 1, "b": 1}, false), "CONFIRMATION_REQUIRED")
	wantOK(t, "get-sum confirmed", s.callVia(t, "evh", "get-sum", map[string]any{"a": 40, "b": 2}, true), "42")

	// Kill the server, start a new one on the same port: the provider
	// reconnects (a new session) and calls succeed again.
	stop()
	res = s.callVia(t, "evh", "echo", map[string]any{"message": "down"}, false)
	wantCode(t, "echo while the server is down", res, "PROVIDER_UNAVAILABLE")
	startEverythingHTTP(t, port)
	eventuallyOK(t, "echo after the server came back", func() *sdk.CallToolResult {
		return s.callVia(t, "evh", "echo", map[string]any{"message": "back"}, false)
	})
}

// TestNPMEverythingPassthrough serves server-everything in flat mode with
// prefix "": a transparent passthrough. What the upstream asks of the client
// (sampling, elicitation, roots) reaches this client; progress and log
// messages come back; prompts, completion and resources are forwarded.
func TestNPMEverythingPassthrough(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	config := fmt.Sprintf(`mode: flat
providers:
  - id: ev
    kind: mcp
    prefix: ""
    command: %q
    args: [%q, stdio]
    requireConfirm: false
`, nodePath(t), npmServer("server-everything"))
	var mu sync.Mutex
	var progress []float64
	var logs []string
	opts := &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Role: "assistant", Model: "interop-model", Content: &sdk.TextContent{Text: "sampled by the interop client"}}, nil
		},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Interop Person", "check": true, "email": "i@example.com", "integer": 5}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.ProgressToken == "interop-progress" {
				progress = append(progress, req.Params.Progress)
			}
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, fmt.Sprint(req.Params.Data))
		},
	}
	s, _ := serveStdio(t, config, opts, &sdk.Root{URI: "file:///interop/root", Name: "interop-root"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	caps := s.cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || caps.Logging == nil || caps.Completions == nil || caps.Prompts == nil {
		t.Errorf("initialize does not advertise the upstream's capabilities: %+v", caps)
	}
	tools, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	// Verbatim names (a passthrough keeps the upstream's own); the tools that
	// server-everything lists only to clients with sampling, elicitation and
	// roots are there too.
	for _, want := range []string{"echo", "get-sum", "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	wantOK(t, "echo", s.call(t, "echo", map[string]any{"message": "transparent"}), "Echo: transparent")
	wantOK(t, "sampling", s.call(t, "trigger-sampling-request", map[string]any{"prompt": "hello?"}), "sampled by the interop client")
	wantOK(t, "elicitation", s.call(t, "trigger-elicitation-request", map[string]any{}), "Interop Person")
	wantOK(t, "roots", s.call(t, "get-roots-list", map[string]any{}), "file:///interop/root")
	img := s.call(t, "get-tiny-image", map[string]any{})
	hasImage := false
	for _, c := range img.Content {
		if ic, ok := c.(*sdk.ImageContent); ok && ic.MIMEType == "image/png" && len(ic.Data) > 0 {
			hasImage = true
		}
	}
	if !hasImage {
		t.Errorf("get-tiny-image: no image content passed through: %+v", img.Content)
	}

	params := &sdk.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 3}}
	params.SetProgressToken("interop-progress")
	if _, err := s.cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	// The Go SDK client hands over the result before it has handled the
	// notifications queued ahead of it: give them a moment.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		got := slices.Clone(progress)
		mu.Unlock()
		if len(got) >= 3 || time.Now().After(deadline) {
			if len(got) < 3 || !slices.IsSorted(got) {
				t.Errorf("progress with the client's token: %v, want 3 increasing", got)
			}
			break
		}
	}

	if err := s.cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	s.call(t, "toggle-simulated-logging", map[string]any{})
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := len(logs)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Error("no log message from the upstream reached the client")
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	prompts, err := s.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pnames []string
	for _, p := range prompts.Prompts {
		pnames = append(pnames, p.Name)
	}
	if !slices.Contains(pnames, "simple-prompt") || !slices.Contains(pnames, "completable-prompt") {
		t.Errorf("prompts/list: %v", pnames)
	}
	if got, err := s.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "simple-prompt"}); err != nil || len(got.Messages) == 0 {
		t.Errorf("prompts/get simple-prompt: %+v, %v", got, err)
	}
	comp, err := s.cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "completable-prompt"},
		Argument: sdk.CompleteParamsArgument{Name: "department", Value: "Eng"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"Engineering"}) {
		t.Errorf("completion: %+v, %v", comp, err)
	}

	res, err := s.cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources/list: %+v, %v", res, err)
	}
	read, err := s.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: res.Resources[0].URI})
	if err != nil || len(read.Contents) == 0 {
		t.Errorf("resources/read %s: %+v, %v", res.Resources[0].URI, read, err)
	}
	tpl, err := s.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) == 0 {
		t.Errorf("resources/templates/list: %+v, %v", tpl, err)
	}
	if err := s.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: res.Resources[0].URI}); err != nil {
		t.Errorf("subscribe: %v", err)
	}
	if err := s.cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: res.Resources[0].URI}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}

	// The passthrough session is its own child process: killed, the next
	// call opens a new one.
	pids := childPIDs(s.cmd.Process.Pid, "server-everything")
	if len(pids) != 2 {
		t.Fatalf("children running server-everything: %v, want the shared one and this client's", pids)
	}
	for _, pid := range pids {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // a group already gone is what the test wants
	}
	eventuallyOK(t, "echo after both upstreams were killed", func() *sdk.CallToolResult {
		return s.call(t, "echo", map[string]any{"message": "still here"})
	})
}
