//go:build unix

package interop

// Interop tests: the agent-tools binary served over stdio to third-party MCP
// peers installed from npm (see package.json):
//
//   - the official TypeScript SDK (@modelcontextprotocol/sdk) as a client,
//     driven by ts-client.mjs, which prints one JSON object per scenario;
//   - the MCP Inspector CLI (@modelcontextprotocol/inspector, --cli mode).
//
// The binary is built once in TestMain (or taken from $AGENT_TOOLS_INTEROP_BIN
// when that is set). Each test gets a fresh project
// directory with fixture scripts in .agents/tools/.
//
// When interop/node_modules is missing the tests skip, except when the
// environment variable CI is set: then they fail (CI must never skip them
// silently). Prepare with: cd interop && npm ci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	buildTimeout = 5 * time.Minute
	// peerTimeout bounds one Node process (one MCP session and its scenario).
	// ts-client.mjs has its own, shorter watchdog (90 s) and per-request
	// timeouts, so this only fires if Node itself wedges.
	peerTimeout = 2 * time.Minute
)

var (
	interopDir  string // absolute path of this directory
	binPath     string // the freshly built agent-tools binary
	peersReason string // non-empty: why the npm peers cannot run
	buildErr    error
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	interopDir = wd
	peersReason = checkPeers(wd)

	if prebuilt := os.Getenv("AGENT_TOOLS_INTEROP_BIN"); peersReason == "" && prebuilt != "" {
		// Test a given binary (a release build, say) instead of building one.
		binPath, buildErr = filepath.Abs(prebuilt)
	} else if peersReason == "" {
		tmp, err := os.MkdirTemp("", "agent-tools-interop-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "interop:", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		binPath = filepath.Join(tmp, "agent-tools")
		buildErr = buildBinary(binPath)
	}
	return m.Run()
}

// checkPeers reports why the npm peers cannot run ("" when they can): node on
// PATH, and node_modules holding exactly the versions package.json pins.
func checkPeers(dir string) string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not on PATH (Node >= 20 is needed for the interop tests)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return "node --version: " + err.Error()
	}
	var major int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(v)), "v%d.", &major); err != nil || major < 20 {
		return fmt.Sprintf("node %s is too old: the interop tests need Node >= 20", strings.TrimSpace(string(v)))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "cannot read interop/package.json: " + err.Error()
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		return "interop/package.json: " + err.Error()
	}
	for _, name := range []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector",
		"@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-memory"} {
		want := pkg.Dependencies[name]
		if want == "" {
			return fmt.Sprintf("interop/package.json does not depend on %s", name)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Sprintf("interop/node_modules has no %s: run `cd interop && npm ci`", name)
		}
		if err != nil {
			return err.Error()
		}
		var got struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			return fmt.Sprintf("node_modules/%s/package.json: %v", name, err)
		}
		if got.Version != want {
			return fmt.Sprintf("interop/node_modules has %s@%s but package.json pins %s: run `cd interop && npm ci`", name, got.Version, want)
		}
	}
	return ""
}

func buildBinary(out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/agent-tools/agent-tools/cmd/agent-tools")
	cmd.Dir = interopDir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/agent-tools: %v\n%s", err, buf.String())
	}
	return nil
}

// requirePeers skips (or, under CI, fails) when the npm peers are missing, and
// fails when the binary did not build.
func requirePeers(t *testing.T) {
	t.Helper()
	if peersReason != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("interop peers unavailable and CI is set (CI must not skip these tests): %s", peersReason)
		}
		t.Skipf("skipping interop test: %s", peersReason)
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// ---------------------------------------------------------------------------
// Fixture project

const (
	greetScript = `#!/bin/sh
# @description Greet someone by name (interop fixture).
# @param *name string Who to greet
# @readonly
input=$(cat)
printf 'hello %s\n' "$AGENT_TOOLS_PARAM_NAME"
printf 'stdin=%s\n' "$input"
echo "greet-diagnostic on stderr" >&2
`
	// touch has no @readonly: it needs confirmation. It writes relative to its
	// working directory, which must be the project directory.
	touchScript = `#!/bin/sh
# @description Create an empty marker file in the project directory.
# @param *file string Name of the file to create
cat >/dev/null
: > "$AGENT_TOOLS_PARAM_FILE"
echo "created $AGENT_TOOLS_PARAM_FILE"
`
	failScript = `#!/bin/sh
# @description Always fails with exit status 3 (interop fixture).
# @readonly
cat >/dev/null
echo "partial output"
echo "boom" >&2
exit 3
`
)

// newProject creates a project directory with the fixture scripts.
func newProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"greet": greetScript, "touch": touchScript, "fail": failScript} {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ---------------------------------------------------------------------------
// Running the peers

// peerCommand returns a command in its own process group, killed as a group
// when ctx ends (Node peers spawn the server, and the Inspector spawns a
// second Node), with a bounded wait for pipes held by leftovers.
func peerCommand(ctx context.Context, dir string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

type toolInfo struct {
	Name         string   `json:"name"`
	Required     []string `json:"required"`
	Properties   []string `json:"properties"`
	ReadOnlyHint *bool    `json:"readOnlyHint"`
}

type callResult struct {
	IsError           bool            `json:"isError"`
	ContentTypes      []string        `json:"contentTypes"`
	Text              string          `json:"text"`
	JSON              json.RawMessage `json:"json"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// errorEnvelope is the body of every tool error (docs/modes.md, "Errors that teach").
type errorEnvelope struct {
	Error map[string]any `json:"error"`
}

// observation is what ts-client.mjs prints. Step results are in Steps.
type observation struct {
	Fatal        string `json:"fatal"`
	ServerStderr string `json:"serverStderr"`
	Pinged       bool   `json:"pinged"`
	// ProtocolVersion and SessionID: what an HTTP handshake settled.
	ProtocolVersion string     `json:"protocolVersion"`
	SessionID       string     `json:"sessionId"`
	Tools           []toolInfo `json:"tools"`
	ServerInfo      struct {
		Name string `json:"name"`
	} `json:"serverInfo"`
	Steps map[string]callResult `json:"-"`
}

// runTS runs one ts-client.mjs scenario against the binary in project dir.
func runTS(t *testing.T, scenario, project string, serveArgs ...string) *observation {
	t.Helper()
	return runTSWith(t, scenario, nil, append([]string{project, binPath, "serve"}, serveArgs...)...)
}

// runTSWith runs a ts-client.mjs scenario with extra environment (KEY=VALUE)
// and the given target arguments: `<workdir> <command> [args]`, or `- <url>`.
func runTSWith(t *testing.T, scenario string, env []string, target ...string) *observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	args := append([]string{filepath.Join(interopDir, "ts-client.mjs"), scenario}, target...)
	cmd := peerCommand(ctx, interopDir, "node", args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ts-client %s: no answer within %s\nstdout: %s\nstderr: %s", scenario, peerTimeout, stdout.String(), stderr.String())
	}

	line := lastLine(stdout.Bytes())
	var obs observation
	if err := json.Unmarshal(line, &obs); err != nil {
		t.Fatalf("ts-client %s: exit %v; stdout is not one JSON object (%v)\nstdout: %s\nstderr: %s", scenario, runErr, err, stdout.String(), stderr.String())
	}
	if obs.Fatal != "" || runErr != nil {
		t.Fatalf("ts-client %s failed (exit %v): %s\nnode stderr: %s\nserver stderr:\n%s", scenario, runErr, obs.Fatal, stderr.String(), obs.ServerStderr)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(line, &all); err != nil {
		t.Fatal(err)
	}
	obs.Steps = map[string]callResult{}
	for k, v := range all {
		var r callResult
		// Step results are the objects carrying an isError field.
		var probe map[string]json.RawMessage
		if json.Unmarshal(v, &probe) != nil {
			continue
		}
		if _, ok := probe["isError"]; !ok {
			continue
		}
		if err := json.Unmarshal(v, &r); err != nil {
			t.Fatalf("step %s: %v", k, err)
		}
		obs.Steps[k] = r
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server stderr (%s):\n%s", scenario, obs.ServerStderr)
		}
	})
	return &obs
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func (o *observation) step(t *testing.T, name string) callResult {
	t.Helper()
	r, ok := o.Steps[name]
	if !ok {
		t.Fatalf("scenario printed no step %q (have %v)", name, keys(o.Steps))
	}
	return r
}

func (o *observation) toolNames() []string {
	var names []string
	for _, tl := range o.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func (o *observation) tool(t *testing.T, name string) toolInfo {
	t.Helper()
	for _, tl := range o.Tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("tools/list has no %q (have %v)", name, o.toolNames())
	return toolInfo{}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// ---------------------------------------------------------------------------
// Assertions shared by the scenarios

func sorted(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func assertToolSet(t *testing.T, got []string, want ...string) {
	t.Helper()
	if w := sorted(want...); !slices.Equal(got, w) {
		t.Errorf("tools/list names = %v, want exactly %v", got, w)
	}
}

// assertGreet checks a successful greet result: the greeting comes from the
// AGENT_TOOLS_PARAM_NAME environment variable, the arguments arrived as JSON
// on stdin, and stderr follows a [stderr] marker line after stdout.
func assertGreet(t *testing.T, r callResult, name string) {
	t.Helper()
	if r.IsError {
		t.Fatalf("greet: isError, text: %s", r.Text)
	}
	if !slices.Equal(r.ContentTypes, []string{"text"}) {
		t.Errorf("greet: content types %v, want [text]", r.ContentTypes)
	}
	assertGreetText(t, r.Text, name)
}

func assertGreetText(t *testing.T, text, name string) {
	t.Helper()
	if want := "hello " + name + "\n"; !strings.HasPrefix(text, want) {
		t.Errorf("greet: text does not start with %q (env AGENT_TOOLS_PARAM_NAME); text: %q", want, text)
	}
	stdinLine := ""
	for _, l := range strings.Split(text, "\n") {
		if s, ok := strings.CutPrefix(l, "stdin="); ok {
			stdinLine = s
			break
		}
	}
	var stdin map[string]any
	if err := json.Unmarshal([]byte(stdinLine), &stdin); err != nil {
		t.Errorf("greet: stdin line %q is not JSON: %v; text: %q", stdinLine, err, text)
	} else if len(stdin) != 1 || stdin["name"] != name {
		t.Errorf("greet: stdin JSON = %v, want {name: %q}", stdin, name)
	}
	marker := strings.Index(text, "\n[stderr]\n")
	diag := strings.Index(text, "greet-diagnostic on stderr")
	hello := strings.Index(text, "hello ")
	if marker < 0 || diag < marker || hello > marker {
		t.Errorf("greet: want stdout, then a [stderr] line, then the script's stderr; text: %q", text)
	}
}

// assertEnvelope checks an error result: isError, the text is the JSON
// envelope, structuredContent carries the same envelope, and the code matches.
// It returns the envelope's error object.
func assertEnvelope(t *testing.T, step string, r callResult, code string) map[string]any {
	t.Helper()
	if !r.IsError {
		t.Fatalf("%s: isError = false, want true; text: %s", step, r.Text)
	}
	var fromText errorEnvelope
	if err := json.Unmarshal([]byte(r.Text), &fromText); err != nil || fromText.Error == nil {
		t.Fatalf("%s: text is not an error envelope (%v): %s", step, err, r.Text)
	}
	if len(r.StructuredContent) == 0 || string(r.StructuredContent) == "null" {
		t.Errorf("%s: structuredContent missing on an error result", step)
	} else {
		var fromStructured errorEnvelope
		if err := json.Unmarshal(r.StructuredContent, &fromStructured); err != nil || fromStructured.Error == nil {
			t.Errorf("%s: structuredContent is not an error envelope (%v): %s", step, err, r.StructuredContent)
		} else if fromStructured.Error["code"] != fromText.Error["code"] {
			t.Errorf("%s: structuredContent code %v != text code %v", step, fromStructured.Error["code"], fromText.Error["code"])
		}
	}
	e := fromText.Error
	if e["code"] != code {
		t.Errorf("%s: error code = %v, want %s; envelope: %s", step, e["code"], code, r.Text)
	}
	for _, f := range []string{"message", "hint"} {
		if s, _ := e[f].(string); s == "" {
			t.Errorf("%s: envelope has no %s: %s", step, f, r.Text)
		}
	}
	return e
}

// assertRetry checks CONFIRMATION_REQUIRED's retry: the tool to call again and
// the exact arguments, confirmation included.
func assertRetry(t *testing.T, e map[string]any, tool string, wantArgs map[string]any) {
	t.Helper()
	retry, _ := e["retry"].(map[string]any)
	if retry == nil {
		t.Fatalf("CONFIRMATION_REQUIRED has no retry: %v", e)
	}
	if retry["tool"] != tool {
		t.Errorf("retry.tool = %v, want %s", retry["tool"], tool)
	}
	got, _ := json.Marshal(retry["arguments"])
	want, _ := json.Marshal(wantArgs)
	if !bytes.Equal(got, want) {
		t.Errorf("retry.arguments = %s, want %s", got, want)
	}
}

func assertBackendExit3(t *testing.T, step string, r callResult) {
	t.Helper()
	e := assertEnvelope(t, step, r, "BACKEND_ERROR")
	if code, _ := e["exit_code"].(float64); code != 3 {
		t.Errorf("%s: exit_code = %v, want 3; envelope: %s", step, e["exit_code"], r.Text)
	}
	if out, _ := e["output"].(string); !strings.Contains(out, "partial output") {
		t.Errorf("%s: envelope output lacks the script's stdout: %s", step, r.Text)
	}
}

func assertFile(t *testing.T, project, name string, exists bool) {
	t.Helper()
	_, err := os.Stat(filepath.Join(project, name))
	switch {
	case exists && err != nil:
		t.Errorf("%s was not created in the project directory: %v", name, err)
	case !exists && err == nil:
		t.Errorf("%s exists: an unconfirmed mutating call ran", name)
	}
}

// ---------------------------------------------------------------------------
// TypeScript SDK client

// builtinFacade is the builtin provider's progressive pair. Zero-config serves
// the local provider "plus the built-ins", and the builtin
// provider (runtime_status) gets its own discover/call pair like any other
// provider.
var builtinFacade = []string{"agent_tools_builtin_discover", "agent_tools_builtin_call"}

func TestTSSDKProgressive(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	project := newProject(t)
	obs := runTS(t, "progressive", project)

	if obs.ServerInfo.Name != "agent-tools" {
		t.Errorf("serverInfo.name = %q, want agent-tools", obs.ServerInfo.Name)
	}
	if !obs.Pinged {
		t.Errorf("ping did not answer")
	}
	assertToolSet(t, obs.toolNames(), append([]string{"agent_tools_help", "agent_tools_local_discover", "agent_tools_local_call"}, builtinFacade...)...)
	call := obs.tool(t, "agent_tools_local_call")
	if !slices.Equal(call.Required, []string{"toolName"}) || !slices.Equal(sorted(call.Properties...), []string{"arguments", "confirm", "toolName"}) {
		t.Errorf("agent_tools_local_call schema: required %v, properties %v; want {toolName, arguments, confirm?}", call.Required, call.Properties)
	}
	if disc := obs.tool(t, "agent_tools_local_discover"); len(disc.Required) != 0 || !slices.Contains(disc.Properties, "query") {
		t.Errorf("agent_tools_local_discover schema: required %v, properties %v; want {query?...}", disc.Required, disc.Properties)
	}

	t.Run("help", func(t *testing.T) {
		r := obs.step(t, "help")
		if r.IsError {
			t.Fatalf("help: isError: %s", r.Text)
		}
		var help struct {
			Providers []struct {
				Prefix string `json:"prefix"`
				Tools  int    `json:"tools"`
			} `json:"providers"`
		}
		if err := json.Unmarshal(r.StructuredContent, &help); err != nil {
			t.Fatalf("help structuredContent: %v: %s", err, r.StructuredContent)
		}
		found := false
		for _, p := range help.Providers {
			if p.Prefix == "local" {
				found = true
				if p.Tools != 3 {
					t.Errorf("help: local has %d tools, want 3", p.Tools)
				}
			}
		}
		if !found {
			t.Errorf("help does not list provider local: %s", r.Text)
		}
	})

	t.Run("discover without query", func(t *testing.T) {
		r := obs.step(t, "discoverAll")
		if r.IsError {
			t.Fatalf("discover: isError: %s", r.Text)
		}
		var d struct {
			Tools []struct {
				Name     string `json:"name"`
				ReadOnly bool   `json:"readOnly"`
			} `json:"tools"`
			Total int `json:"total"`
		}
		if err := json.Unmarshal(r.StructuredContent, &d); err != nil {
			t.Fatalf("discover structuredContent: %v: %s", err, r.StructuredContent)
		}
		var names []string
		ro := map[string]bool{}
		for _, tl := range d.Tools {
			names = append(names, tl.Name)
			ro[tl.Name] = tl.ReadOnly
		}
		if !slices.Equal(sorted(names...), []string{"fail", "greet", "touch"}) || d.Total != 3 {
			t.Errorf("discover lists %v (total %d), want fail, greet, touch (3)", names, d.Total)
		}
		if !ro["greet"] || !ro["fail"] || ro["touch"] {
			t.Errorf("discover readOnly flags = %v, want greet and fail read-only, touch not", ro)
		}
	})

	t.Run("discover with query", func(t *testing.T) {
		r := obs.step(t, "discoverQuery")
		if r.IsError {
			t.Fatalf("discover: isError: %s", r.Text)
		}
		var d struct {
			Results []struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"results"`
		}
		if err := json.Unmarshal(r.StructuredContent, &d); err != nil {
			t.Fatalf("discover structuredContent: %v: %s", err, r.StructuredContent)
		}
		if len(d.Results) == 0 || d.Results[0].Name != "greet" || d.Results[0].Kind != "tool" {
			t.Errorf("discover(query=greet someone by name): want greet first, got %s", r.Text)
		}
	})

	t.Run("call greet", func(t *testing.T) {
		assertGreet(t, obs.step(t, "greet"), "Ada Lovelace ☃")
	})

	t.Run("touch needs confirmation", func(t *testing.T) {
		e := assertEnvelope(t, "touch without confirm", obs.step(t, "touchNoConfirm"), "CONFIRMATION_REQUIRED")
		assertRetry(t, e, "agent_tools_local_call", map[string]any{
			"arguments": map[string]any{"file": "progressive-unconfirmed.txt"}, "confirm": true, "toolName": "touch",
		})
		assertFile(t, project, "progressive-unconfirmed.txt", false)
	})

	t.Run("touch with confirm", func(t *testing.T) {
		r := obs.step(t, "touchConfirm")
		if r.IsError {
			t.Fatalf("touch with confirm: isError: %s", r.Text)
		}
		if !strings.Contains(r.Text, "created progressive-confirmed.txt") {
			t.Errorf("touch with confirm: text %q", r.Text)
		}
		assertFile(t, project, "progressive-confirmed.txt", true)
	})

	t.Run("failing script", func(t *testing.T) {
		assertBackendExit3(t, "fail", obs.step(t, "fail"))
	})

	t.Run("unknown tool", func(t *testing.T) {
		e := assertEnvelope(t, "unknown tool", obs.step(t, "unknown"), "UNKNOWN_TOOL")
		dym, _ := e["did_you_mean"].([]any)
		if !slices.Contains(dym, any("greet")) {
			t.Errorf("UNKNOWN_TOOL for %q: did_you_mean = %v, want it to contain greet", "gret", e["did_you_mean"])
		}
	})
}

func TestTSSDKSearchMode(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	project := newProject(t)
	obs := runTS(t, "search", project, "--mode", "search")

	assertToolSet(t, obs.toolNames(), "agent_tools_help", "agent_tools_search", "agent_tools_call")
	if c := obs.tool(t, "agent_tools_call"); !slices.Equal(c.Required, []string{"tool"}) || !slices.Equal(sorted(c.Properties...), []string{"arguments", "confirm", "tool"}) {
		t.Errorf("agent_tools_call schema: required %v, properties %v; want {tool, arguments, confirm?}", c.Required, c.Properties)
	}

	t.Run("search", func(t *testing.T) {
		r := obs.step(t, "search")
		var d struct {
			Results []struct {
				Name     string `json:"name"`
				Provider string `json:"provider"`
			} `json:"results"`
		}
		if r.IsError || json.Unmarshal(r.StructuredContent, &d) != nil || len(d.Results) == 0 {
			t.Fatalf("search: isError=%v, text %s", r.IsError, r.Text)
		}
		if d.Results[0].Name != "greet" || d.Results[0].Provider != "local" {
			t.Errorf("search(greet someone by name): want local greet first, got %s", r.Text)
		}
	})
	t.Run("call greet", func(t *testing.T) {
		assertGreet(t, obs.step(t, "greet"), "Grace")
	})
	t.Run("touch", func(t *testing.T) {
		e := assertEnvelope(t, "touch without confirm", obs.step(t, "touchNoConfirm"), "CONFIRMATION_REQUIRED")
		assertRetry(t, e, "agent_tools_call", map[string]any{
			"arguments": map[string]any{"file": "search-unconfirmed.txt"}, "confirm": true, "tool": "touch",
		})
		assertFile(t, project, "search-unconfirmed.txt", false)
		if r := obs.step(t, "touchConfirm"); r.IsError {
			t.Errorf("touch with confirm: isError: %s", r.Text)
		}
		assertFile(t, project, "search-confirmed.txt", true)
	})
}

func TestTSSDKFlatMode(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	project := newProject(t)
	obs := runTS(t, "flat", project, "--mode=flat")

	// Local scripts and built-ins keep their bare names in flat mode (docs/modes.md).
	assertToolSet(t, obs.toolNames(), "greet", "touch", "fail", "runtime_status", "execute_javascript")
	if g := obs.tool(t, "greet"); !slices.Equal(g.Required, []string{"name"}) || slices.Contains(g.Properties, "agent_tools_confirm") {
		t.Errorf("flat greet schema: required %v, properties %v; want required [name], no agent_tools_confirm (read-only)", g.Required, g.Properties)
	}
	if tc := obs.tool(t, "touch"); !slices.Contains(tc.Properties, "agent_tools_confirm") {
		t.Errorf("flat touch schema lacks agent_tools_confirm: properties %v", tc.Properties)
	}
	if g := obs.tool(t, "greet"); g.ReadOnlyHint == nil || !*g.ReadOnlyHint {
		t.Errorf("flat greet: annotations.readOnlyHint = %v, want true", g.ReadOnlyHint)
	}

	t.Run("call greet", func(t *testing.T) {
		assertGreet(t, obs.step(t, "greet"), "Linus")
	})
	t.Run("touch", func(t *testing.T) {
		e := assertEnvelope(t, "touch without confirm", obs.step(t, "touchNoConfirm"), "CONFIRMATION_REQUIRED")
		assertRetry(t, e, "touch", map[string]any{"agent_tools_confirm": true, "file": "flat-unconfirmed.txt"})
		assertFile(t, project, "flat-unconfirmed.txt", false)
		if r := obs.step(t, "touchConfirm"); r.IsError {
			t.Errorf("touch with agent_tools_confirm: isError: %s", r.Text)
		}
		assertFile(t, project, "flat-confirmed.txt", true)
	})
	t.Run("failing script", func(t *testing.T) {
		assertBackendExit3(t, "fail", obs.step(t, "fail"))
	})
}

// ---------------------------------------------------------------------------
// MCP Inspector CLI

// inspector runs `mcp-inspector --cli <binary> serve [serveArgs] <method args>`
// in project (the Inspector's stdio transport starts the server in its own
// working directory) and decodes its JSON output.
func inspector(t *testing.T, project string, serveArgs []string, methodArgs ...string) map[string]any {
	t.Helper()
	return inspectorAt(t, project, append(append([]string{binPath, "serve"}, serveArgs...), methodArgs...)...)
}

// inspectorAt runs `mcp-inspector --cli <target and method args>` in dir.
func inspectorAt(t *testing.T, project string, cliArgs ...string) map[string]any {
	t.Helper()
	methodArgs := cliArgs
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	bin := filepath.Join(interopDir, "node_modules", ".bin", "mcp-inspector")
	args := append([]string{bin, "--cli"}, cliArgs...)
	cmd := peerCommand(ctx, project, "node", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcp-inspector %v: no answer within %s\nstdout: %s\nstderr: %s", methodArgs, peerTimeout, stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("mcp-inspector %v: %v\nstdout: %s\nstderr: %s", methodArgs, err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("mcp-inspector %v: output is not JSON (%v)\nstdout: %s\nstderr: %s", methodArgs, err, stdout.String(), stderr.String())
	}
	return out
}

func inspectorToolNames(t *testing.T, out map[string]any) []string {
	t.Helper()
	tools, _ := out["tools"].([]any)
	var names []string
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// inspectorText returns the text of a tools/call result and its isError.
func inspectorText(t *testing.T, out map[string]any) (string, bool) {
	t.Helper()
	content, _ := out["content"].([]any)
	var texts []string
	for _, c := range content {
		m, _ := c.(map[string]any)
		if m["type"] == "text" {
			s, _ := m["text"].(string)
			texts = append(texts, s)
		}
	}
	isErr, _ := out["isError"].(bool)
	if len(texts) == 0 {
		t.Fatalf("tools/call result has no text content: %v", out)
	}
	return strings.Join(texts, "\n"), isErr
}

func TestInspectorCLI(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	project := newProject(t)

	t.Run("tools/list progressive", func(t *testing.T) {
		out := inspector(t, project, nil, "--method", "tools/list")
		assertToolSet(t, inspectorToolNames(t, out), append([]string{"agent_tools_help", "agent_tools_local_discover", "agent_tools_local_call"}, builtinFacade...)...)
	})

	t.Run("tools/call greet via agent_tools_local_call", func(t *testing.T) {
		// The Inspector parses a --tool-arg value as JSON when the tool's
		// schema types that property object/array/number/boolean.
		out := inspector(t, project, nil, "--method", "tools/call",
			"--tool-name", "agent_tools_local_call",
			"--tool-arg", "toolName=greet",
			"--tool-arg", `arguments={"name":"Inspector Gadget"}`)
		text, isErr := inspectorText(t, out)
		if isErr {
			t.Fatalf("greet via inspector: isError: %s", text)
		}
		assertGreetText(t, text, "Inspector Gadget")
	})

	t.Run("tools/call touch unconfirmed then confirmed", func(t *testing.T) {
		out := inspector(t, project, nil, "--method", "tools/call",
			"--tool-name", "agent_tools_local_call",
			"--tool-arg", "toolName=touch",
			"--tool-arg", `arguments={"file":"inspector-unconfirmed.txt"}`)
		text, isErr := inspectorText(t, out)
		var env errorEnvelope
		if !isErr || json.Unmarshal([]byte(text), &env) != nil || env.Error["code"] != "CONFIRMATION_REQUIRED" {
			t.Errorf("touch without confirm via inspector: isError=%v text %s; want CONFIRMATION_REQUIRED", isErr, text)
		}
		if _, ok := out["structuredContent"]; !ok {
			t.Errorf("touch without confirm via inspector: no structuredContent: %v", out)
		}
		assertFile(t, project, "inspector-unconfirmed.txt", false)

		out = inspector(t, project, nil, "--method", "tools/call",
			"--tool-name", "agent_tools_local_call",
			"--tool-arg", "toolName=touch",
			"--tool-arg", `arguments={"file":"inspector-confirmed.txt"}`,
			"--tool-arg", "confirm=true")
		if text, isErr := inspectorText(t, out); isErr {
			t.Errorf("touch with confirm via inspector: isError: %s", text)
		}
		assertFile(t, project, "inspector-confirmed.txt", true)
	})

	t.Run("flat mode tools/list and tools/call", func(t *testing.T) {
		out := inspector(t, project, []string{"--mode=flat"}, "--method", "tools/list")
		assertToolSet(t, inspectorToolNames(t, out), "greet", "touch", "fail", "runtime_status", "execute_javascript")

		out = inspector(t, project, []string{"--mode=flat"}, "--method", "tools/call",
			"--tool-name", "greet", "--tool-arg", "name=flat inspector")
		text, isErr := inspectorText(t, out)
		if isErr {
			t.Fatalf("flat greet via inspector: isError: %s", text)
		}
		assertGreetText(t, text, "flat inspector")
	})
}
