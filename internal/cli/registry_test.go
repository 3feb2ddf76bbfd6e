package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agent-tools/agent-tools/internal/mcpregistry"
	"github.com/agent-tools/agent-tools/internal/tests/regserver"
	"github.com/agent-tools/agent-tools/internal/tests/secretstest"
)

const serverSchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// interopSeed are server.json entries for the npm servers interop/ pins
// (interop/package.json), so that an added server really starts, and a
// remote with headers.
func interopSeed() []json.RawMessage {
	npm := func(name, pkg, desc string, extra string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"$schema":%q,"name":%q,"description":%q,"version":"2026.8.31",
			"repository":{"url":"https://github.com/modelcontextprotocol/servers","source":"github","subfolder":"src/%s"},
			"packages":[{"registryType":"npm","registryBaseUrl":"https://registry.npmjs.org","identifier":%q,"version":"2026.8.31",
			"runtimeHint":"npx","transport":{"type":"stdio"}%s}]}`, serverSchema, name, desc, strings.TrimPrefix(pkg, "@modelcontextprotocol/server-"), pkg, extra))
	}
	return []json.RawMessage{
		npm("io.github.modelcontextprotocol/server-everything", "@modelcontextprotocol/server-everything",
			"MCP server that exercises all the features of the MCP protocol", ""),
		npm("io.github.modelcontextprotocol/server-memory", "@modelcontextprotocol/server-memory",
			"Knowledge graph-based persistent memory system",
			`,"environmentVariables":[{"name":"MEMORY_FILE_PATH","description":"Path to the memory storage JSON file","format":"filepath"}]`),
		npm("io.github.modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-filesystem",
			"Secure file operations with configurable access controls",
			`,"packageArguments":[{"type":"positional","valueHint":"allowed_directory","isRequired":true,"isRepeated":true,"description":"A directory the server may access"}]`),
		json.RawMessage(fmt.Sprintf(`{"$schema":%q,"name":"com.example.test/remote-notes","description":"Notes over Streamable HTTP","version":"1.2.0",
			"remotes":[{"type":"streamable-http","url":"https://{tenant}.notes.example/mcp","variables":{"tenant":{"description":"Your tenant","default":"acme"}},
			"headers":[{"name":"Authorization","description":"Bearer token","value":"Bearer {notes_token}","isRequired":true,"isSecret":true,"variables":{"notes_token":{"isSecret":true,"isRequired":true}}},
			           {"name":"X-Notes-Region","description":"Region","default":"eu"}]}]}`, serverSchema)),
	}
}

// bundleServer serves testdata/bundle packed as an MCP bundle (a zip),
// and returns server.json entries for it: one with its SHA-256, one
// whose declared SHA-256 is wrong.
func bundleServer() (*httptest.Server, []json.RawMessage, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range []string{"manifest.json", "server/index.js"} {
		data, err := os.ReadFile(filepath.Join("testdata", "bundle", filepath.FromSlash(name)))
		if err != nil {
			return nil, nil, err
		}
		w, err := zw.Create(name)
		if err == nil {
			_, err = w.Write(data)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	bundle := b.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/notes-1.0.0.mcpb" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(bundle)
	}))
	sum := sha256.Sum256(bundle)
	entry := func(name, sha string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"$schema":%q,"name":%q,"description":"A one-tool server as an MCP bundle","version":"1.0.0",
			"packages":[{"registryType":"mcpb","identifier":%q,"version":"1.0.0","fileSha256":%q,"transport":{"type":"stdio"}}]}`,
			serverSchema, name, srv.URL+"/notes-1.0.0.mcpb", sha))
	}
	return srv, []json.RawMessage{entry("com.example.test/notes-bundle", hex.EncodeToString(sum[:])),
		entry("com.example.test/bad-bundle", strings.Repeat("0", 64))}, nil
}

var (
	realOnce sync.Once
	realSrv  *regserver.Server
	realErr  error
	realTime time.Duration
)

// realRegistry starts the official registry once per test binary (its
// own seed file plus interopSeed), or skips saying why it cannot.
func realRegistry(t *testing.T) *regserver.Server {
	t.Helper()
	if why := regserver.Unavailable(); why != "" {
		t.Skip("the official registry server cannot run here: " + why)
	}
	realOnce.Do(func() {
		start := time.Now()
		seed, err := regserver.SeedFile()
		if err != nil {
			realErr = fmt.Errorf("the registry module's seed: %w (run `go run ./internal/tests/regserver/prepare`)", err)
			return
		}
		dir, err := os.MkdirTemp("", "regserver-run-")
		if err != nil {
			realErr = err
			return
		}
		bundles, bundleSeed, err := bundleServer()
		if err != nil {
			realErr = err
			return
		}
		realSrv, realErr = regserver.Start(context.Background(), dir, slices.Concat(seed, interopSeed(), bundleSeed))
		realTime = time.Since(start)
		if realErr != nil {
			bundles.Close()
			os.RemoveAll(dir)
			regserver.Cleanup()
			return
		}
		srv := realSrv
		cleanups = append(cleanups, func() { srv.Stop(); bundles.Close(); os.RemoveAll(dir); regserver.Cleanup() })
	})
	if realErr != nil {
		if strings.Contains(realErr.Error(), "prepare") || strings.Contains(realErr.Error(), "module cache") {
			t.Skip("the official registry server is not built: " + realErr.Error())
		}
		t.Fatal(realErr)
	}
	return realSrv
}

// cleanups run after every test of the binary (TestMain).
var cleanups []func()

// tamper is a proxy in front of the real registry that changes its
// answers in transit: a registry that lies about a version, and one whose
// server.json is malformed. It can be taken down (an unreachable
// registry whose answers are cached).
type tamper struct {
	srv  *httptest.Server
	down bool
	mu   sync.Mutex
}

func newTamper(t *testing.T, target string) *tamper {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tp := &tamper{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body.Close()
		p := resp.Request.URL.EscapedPath()
		switch {
		case strings.Contains(p, "airtable-mcp-server/versions/1.7.2"): // asked 1.7.2, says 1.7.9
			body = bytes.ReplaceAll(body, []byte(`"version":"1.7.2"`), []byte(`"version":"1.7.9"`))
		case strings.Contains(p, "time-mcp-pypi/versions/"): // the package pinned to "latest"
			body = bytes.ReplaceAll(body, []byte(`"version":"1.0.6","runtimeHint"`), []byte(`"version":"latest","runtimeHint"`))
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
		return nil
	}
	tp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp.mu.Lock()
		down := tp.down
		tp.mu.Unlock()
		if down {
			// As a registry that is down: the connection is dropped.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(tp.srv.Close)
	return tp
}

// TestRegistryScripts runs testdata/registry against the official registry
// server (built from its module, on PostgreSQL). Besides TestScripts'
// commands:
//
//	tamper down|up       takes $TAMPER (a proxy of the registry) down or up.
//	[interop]            interop/node_modules holds the pinned npm servers
//	                     ($WORK is set up to run them with npx, offline).
func TestRegistryScripts(t *testing.T) {
	srv := realRegistry(t)
	nodeModules, _ := filepath.Abs(filepath.Join("..", "..", "interop", "node_modules"))
	_, err := os.Stat(filepath.Join(nodeModules, "@modelcontextprotocol", "server-everything", "package.json"))
	haveInterop := err == nil
	tampers := map[string]*tamper{}
	var mu sync.Mutex
	testscript.Run(t, testscript.Params{
		Dir: "testdata/registry",
		Setup: func(e *testscript.Env) error {
			tp := newTamper(t, srv.URL)
			mu.Lock()
			tampers[e.WorkDir] = tp
			mu.Unlock()
			e.Setenv("REGISTRY", srv.URL)
			e.Setenv("TAMPER", tp.srv.URL)
			e.Setenv("XDG_STATE_HOME", filepath.Join(e.WorkDir, "state"))
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			if haveInterop {
				if err := os.Symlink(nodeModules, filepath.Join(e.WorkDir, "node_modules")); err != nil {
					return err
				}
				// npx finds the pinned package in the project's tree, and
				// never asks the npm registry (offline).
				pkg := `{"name":"w","version":"0.0.0","private":true,"dependencies":{"@modelcontextprotocol/server-everything":"2026.8.31"}}`
				if err := os.WriteFile(filepath.Join(e.WorkDir, "package.json"), []byte(pkg), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "interop" {
				return haveInterop, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"agent-tools": runScripted,
			"status":      checkStatus,
			"tamper": func(ts *testscript.TestScript, neg bool, args []string) {
				mu.Lock()
				tp := tampers[ts.Getenv("WORK")]
				mu.Unlock()
				if len(args) != 1 || tp == nil {
					ts.Fatalf("usage: tamper down|up")
				}
				tp.mu.Lock()
				tp.down = args[0] == "down"
				tp.mu.Unlock()
			},
		},
	})
}

// TestRealRegistryClient: the client against the official server: search,
// cursor paging, updated_since, versions; it logs the search latency.
func TestRealRegistryClient(t *testing.T) {
	srv := realRegistry(t)
	t.Logf("registry server built and started in %v", realTime.Round(time.Millisecond))
	if testing.Verbose() {
		t.Logf("registry log:\n%s", srv.Log())
	}
	ctx := context.Background()
	c := &mcpregistry.Client{Registries: []string{srv.URL}}
	all, notes, err := c.Search(ctx, mcpregistry.Query{Limit: 2}, 0)
	if err != nil || len(notes) > 0 {
		t.Fatal(err, notes)
	}
	var names []string
	for _, e := range all {
		names = append(names, e.Server.Name+"@"+e.Server.Version)
	}
	// Every version of every seeded server, across pages of two.
	for _, want := range []string{"io.github.domdomegg/airtable-mcp-server@1.7.2", "io.github.domdomegg/airtable-mcp-server@1.7.3",
		"io.github.domdomegg/time-mcp-nuget@1.0.8", "io.github.modelcontextprotocol/server-everything@2026.8.31", "com.example.test/remote-notes@1.2.0"} {
		if !slices.Contains(names, want) {
			t.Errorf("paged search misses %s: %v", want, names)
		}
	}
	if len(all) != 10 {
		t.Errorf("%d entries, want 10 (4 of the module's seed, 6 of ours): %v", len(all), names)
	}
	latest, _, err := c.Search(ctx, mcpregistry.Query{Search: "airtable", Version: "latest"}, 0)
	if err != nil || len(latest) != 1 || latest[0].Server.Version != "1.7.3" {
		t.Fatalf("latest airtable: %+v %v", latest, err)
	}
	future, _, err := c.Search(ctx, mcpregistry.Query{UpdatedSince: time.Now().Add(time.Hour)}, 0)
	if err != nil || len(future) != 0 {
		t.Fatalf("updated_since in the future: %d entries, %v", len(future), err)
	}
	past, _, err := c.Search(ctx, mcpregistry.Query{UpdatedSince: time.Now().Add(-24 * time.Hour)}, 0)
	if err != nil || len(past) != len(all) {
		t.Fatalf("updated_since yesterday: %d entries, want %d, %v", len(past), len(all), err)
	}
	vs, _, err := c.Versions(ctx, "io.github.domdomegg/airtable-mcp-server")
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions: %+v %v", vs, err)
	}
	// Search latency, as `agent-tools registry search` pays it (no cache).
	const n = 20
	var d []time.Duration
	for range n {
		start := time.Now()
		if _, _, err := c.Search(ctx, mcpregistry.Query{Search: "server", Version: "latest", Limit: 100}, 0); err != nil {
			t.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	slices.Sort(d)
	t.Logf("search latency against the real registry: p50 %v, max %v (%d searches)", d[n/2].Round(time.Microsecond), d[n-1].Round(time.Microsecond), n)
}

// TestRegistryAddToFirstTool times what a person does, against the real
// registry: add the npm server, approve the entry, list (it starts and its
// tools are pinned, held), approve one tool, call it. It logs the wall time.
func TestRegistryAddToFirstTool(t *testing.T) {
	srv := realRegistry(t)
	nodeModules, _ := filepath.Abs(filepath.Join("..", "..", "interop", "node_modules"))
	if _, err := os.Stat(filepath.Join(nodeModules, "@modelcontextprotocol", "server-everything", "package.json")); err != nil {
		t.Skip("interop/node_modules is missing: run cd interop && npm ci")
	}
	dir := t.TempDir()
	if err := os.Symlink(nodeModules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"package.json":     `{"name":"w","version":"0.0.0","private":true,"dependencies":{"@modelcontextprotocol/server-everything":"2026.8.31"}}`,
		"agent-tools.yaml": "registry:\n  url: " + srv.URL + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"HOME": filepath.Join(dir, "home"), "PATH": os.Getenv("PATH"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Dir: dir,
			LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
		if code := Run(context.Background(), env, args); code != 0 {
			t.Fatalf("agent-tools %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		}
		return out.String()
	}
	start := time.Now()
	// Its own id: the upstream tool-list cache of the test binary must not
	// answer for it (the script test added the same server).
	run("registry", "add", "io.github.modelcontextprotocol/server-everything", "--id", "first", "--yes")
	added := time.Since(start)
	run("registry", "approve", "first") // nothing of it ran before (issue 44, item 6)
	// Listed only as held back (a row of its own, issue 49 item 3), never
	// as a callable tool.
	if out := run("list"); !regexp.MustCompile(`(?m)^first_echo +first +- +held `).MatchString(out) {
		t.Fatalf("the new provider's tool is not shown as held before approval:\n%s", out)
	}
	run("pins", "approve", "first_echo")
	out := run("call", "first_echo", "--args", `{"message":"first call"}`, "--confirm")
	total := time.Since(start)
	if !strings.Contains(out, "first call") {
		t.Fatalf("call: %s", out)
	}
	t.Logf("add-to-first-tool: add %v (its registry lookup included), add → list → approve → first call %v", added.Round(time.Millisecond), total.Round(time.Millisecond))
}

// TestRegistryAddKeyring: with a keyring (gnome-keyring on a private
// D-Bus), a declared secret is referenced as ${keyring:ID/NAME}: missing,
// the entry is written disabled with the command that stores it; stored,
// the entry is enabled. The value is never in the file or the output.
func TestRegistryAddKeyring(t *testing.T) {
	srv := realRegistry(t)
	secretstest.Keyring(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte("registry:\n  url: "+srv.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": filepath.Join(dir, "home"), "PATH": os.Getenv("PATH"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	run := func(stdin string, args ...string) string {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Dir: dir,
			LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
		if code := Run(context.Background(), env, args); code != 0 {
			t.Fatalf("agent-tools %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		}
		if strings.Contains(out.String()+errb.String(), "airtable-keyring-canary") {
			t.Fatalf("the secret value is in the output of %s", strings.Join(args, " "))
		}
		return out.String()
	}
	out := run("", "registry", "add", "io.github.domdomegg/airtable-mcp-server", "--id", "airkr", "--yes")
	for _, want := range []string{
		"+      AIRTABLE_API_KEY: ${keyring:airkr/AIRTABLE_API_KEY} # secret, in the keyring (agent-tools secrets set airkr/AIRTABLE_API_KEY); never written here",
		"+    enabled: false # agent-tools secrets set airkr/AIRTABLE_API_KEY, then remove this line",
		"it is disabled until airkr/AIRTABLE_API_KEY is in the keyring",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("add without the item: no %q in\n%s", want, out)
		}
	}
	run("airtable-keyring-canary", "secrets", "set", "airkr2/AIRTABLE_API_KEY")
	t.Cleanup(func() { run("", "secrets", "rm", "airkr2/AIRTABLE_API_KEY") })
	out = run("", "registry", "add", "io.github.domdomegg/airtable-mcp-server", "--id", "airkr2", "--yes")
	if !strings.Contains(out, "+      AIRTABLE_API_KEY: ${keyring:airkr2/AIRTABLE_API_KEY}") || strings.Contains(out, "disabled until") {
		t.Errorf("add with the item stored:\n%s", out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "agent-tools.yaml"))
	if err != nil || strings.Contains(string(data), "airtable-keyring-canary") {
		t.Fatalf("the file holds the secret (or %v)", err)
	}
	run("", "config", "validate")
}
