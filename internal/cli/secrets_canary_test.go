package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"

	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/metrics"
	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/tests/secretstest"
)

// TestSecretCanaries: a canary secret from every store (keyring, pass,
// file, age, cmd) is resolved, sent to a real process (its environment) and
// to an HTTP API (its headers), echoed back by both in a result and in an
// error, and must appear on no output surface: results,
// errors, logs, audit, doctor (text and JSON), metrics. Each surface shows
// the reference's name instead. A store whose backend is missing is
// skipped with the reason; the table is logged (go test -v).
func TestSecretCanaries(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test's tools are POSIX shell commands")
	}
	dir := t.TempDir()
	canaries := map[string]string{} // store → canary value
	env := map[string]string{}      // the cli tool's variable → reference
	skipped := map[string]string{}
	// file
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("cnry-file-U7i8O9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	canaries["file"], env["F"] = "cnry-file-U7i8O9", "${file:f.txt}"
	// cmd
	if err := os.WriteFile(filepath.Join(dir, "vault.sh"), []byte("#!/bin/sh\necho cnry-cmd-D3f4G5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	canaries["cmd"], env["C"] = "cnry-cmd-D3f4G5", "${cmd:vault}"
	// age
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "age.key"), []byte(id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGE_IDENTITY_FILE", filepath.Join(dir, "age.key"))
	var enc bytes.Buffer
	w, _ := age.Encrypt(&enc, id.Recipient())
	io.WriteString(w, `{"tok": "cnry-age-P0a1S2"}`)
	w.Close()
	if err := os.WriteFile(filepath.Join(dir, "s.enc.json"), enc.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	canaries["age"], env["A"] = "cnry-age-P0a1S2", "${age:s.enc.json#tok}"
	// keyring
	if err := secretstest.TryKeyring(); err != nil {
		skipped["keyring"] = err.Error()
	} else if err := secrets.OS().Set("canary-svc", "acct", "cnry-keyring-Q1w2E3"); err != nil {
		skipped["keyring"] = err.Error()
	} else {
		t.Cleanup(func() { _ = secrets.OS().Delete("canary-svc", "acct") })
		canaries["keyring"], env["K"] = "cnry-keyring-Q1w2E3", "${keyring:canary-svc/acct}"
	}
	// pass
	if err := secretstest.PassMissing(); err != nil {
		skipped["pass"] = err.Error()
	} else {
		secretstest.Pass(t)("canary/p", "cnry-pass-R4t5Y6")
		canaries["pass"], env["P"] = "cnry-pass-R4t5Y6", "${pass:canary/p}"
	}

	// An HTTP API that echoes the credential headers it receives, in a
	// result (/echo) and in an error (/fail, 500).
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []string
		for _, k := range []string{"X-K", "X-P", "X-F", "X-A", "X-C"} {
			got = append(got, k+"="+r.Header.Get(k))
		}
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
		}
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"received": got})
		_, _ = w.Write(b)
	}))
	defer api.Close()
	spec := "openapi: 3.0.0\ninfo: {title: echo, version: \"1\"}\npaths:\n" +
		"  /echo: {get: {operationId: echo, responses: {\"200\": {description: ok}}}}\n" +
		"  /fail: {get: {operationId: fail, responses: {\"200\": {description: ok}}}}\n"
	if err := os.WriteFile(filepath.Join(dir, "api.yaml"), []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var hdrYAML []string
	for k, ref := range env {
		hdrYAML = append(hdrYAML, fmt.Sprintf("        X-%s: %q", k, ref))
	}
	sort.Strings(hdrYAML)

	var vars, envYAML []string
	for k, ref := range env {
		vars = append(vars, `"$$`+k+`"`)
		envYAML = append(envYAML, fmt.Sprintf("      %s: %q", k, ref))
	}
	sort.Strings(vars)
	sort.Strings(envYAML)
	audit := filepath.Join(dir, "audit.jsonl")
	cfg := fmt.Sprintf(`providers:
  - id: sx
    kind: cli
    allow: [sh]
    requireConfirm: false
    env:
%s
    tools:
      - name: show
        description: Prints the secrets.
        argv: [sh, -c, 'echo %s']
        readonly: true
      - name: fail
        description: Prints the secrets on stderr and fails.
        argv: [sh, -c, 'echo %s >&2; echo out %s; exit 3']
  - id: web
    kind: openapi
    spec: ./api.yaml
    baseURL: %s
    requireConfirm: false
    auth:
      header:
%s
secrets:
  commands:
    vault: [./vault.sh]
audit:
  path: %s
`, strings.Join(envYAML, "\n"), strings.Join(vars, " "), strings.Join(vars, " "), strings.Join(vars, " "), api.URL, strings.Join(hdrYAML, "\n"), audit)
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	surfaces := map[string]string{}
	var logs syncBuf
	cenv := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &logs, Dir: dir, LookupEnv: os.LookupEnv}
	f := newFlags(cenv, "call", "call")
	m := metrics.New()
	ctx := context.Background()
	a, code := load(ctx, cenv, f, stderrLog(cenv, slog.LevelDebug), nil, m.Middleware())
	if a == nil {
		t.Fatalf("load: %d\n%s", code, logs.String())
	}
	call := func(tool string) (string, bool) {
		resp := a.Call(ctx, a.Facade.Request(facade.Caller{Session: "s", Client: "c", Via: "cli", Tool: tool, Args: json.RawMessage(`{}`), Shape: cliShape{}, Human: true}))
		if resp.Err != nil {
			b, _ := json.Marshal(resp.Err.Body())
			return string(b), true
		}
		return resp.Result.Text, false
	}
	res, failed := call("sx_show")
	if failed {
		t.Fatalf("sx_show failed: %s\n%s", res, logs.String())
	}
	surfaces["results"] = res
	errText, failed := call("sx_fail")
	if !failed {
		t.Fatalf("sx_fail did not fail: %s", errText)
	}
	surfaces["errors"] = errText
	webRes, failed := call("web_echo")
	if failed || !strings.Contains(webRes, "X-F=[redacted: file:f.txt]") {
		t.Fatalf("web_echo: %s (failed %v)", webRes, failed)
	}
	surfaces["results"] += "\n" + webRes
	webErr, failed := call("web_fail")
	if !failed {
		t.Fatalf("web_fail did not fail: %s", webErr)
	}
	if !strings.Contains(webErr, "X-F=[redacted: file:f.txt]") {
		t.Errorf("web_fail's error does not carry the echoed headers (the test proves less): %s", webErr)
	}
	surfaces["errors"] += "\n" + webErr
	a.Close()
	srv := httptest.NewServer(m.Handler())
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	surfaces["metrics"] = string(b)
	ab, _ := os.ReadFile(audit)
	surfaces["audit"] = string(ab)
	surfaces["logs"] = logs.String()
	var dout, derr bytes.Buffer
	Run(ctx, &Env{Stdin: strings.NewReader(""), Stdout: &dout, Stderr: &derr, Dir: dir, LookupEnv: os.LookupEnv}, []string{"doctor"})
	surfaces["doctor"] = dout.String() + derr.String()
	dout.Reset()
	Run(ctx, &Env{Stdin: strings.NewReader(""), Stdout: &dout, Stderr: &derr, Dir: dir, LookupEnv: os.LookupEnv}, []string{"doctor", "--json"})
	surfaces["doctor --json"] = dout.String() + derr.String()

	// The secrets did reach the process (the result names every reference,
	// as "[redacted: keyring:canary-svc/acct]": never as "${…}", which would
	// read as a reference that never resolved).
	for store := range canaries {
		ref := env[map[string]string{"keyring": "K", "pass": "P", "file": "F", "age": "A", "cmd": "C"}[store]]
		if marker := "[redacted: " + strings.TrimSuffix(strings.TrimPrefix(ref, "${"), "}") + "]"; !strings.Contains(surfaces["results"], marker) {
			t.Errorf("results do not show %s's reference as %s: %q", store, marker, surfaces["results"])
		}
	}
	if strings.Contains(surfaces["results"], "${") || strings.Contains(surfaces["errors"], "${") {
		t.Errorf("a redacted value reads as a reference: %q\n%q", surfaces["results"], surfaces["errors"])
	}
	if len(ab) == 0 || !strings.Contains(surfaces["metrics"], "sx_show") {
		t.Fatalf("audit or metrics empty: %d bytes of audit; metrics:\n%.400s", len(ab), surfaces["metrics"])
	}
	names := []string{"results", "errors", "logs", "audit", "doctor", "doctor --json", "metrics"}
	stores := []string{"keyring", "pass", "file", "age", "cmd"}
	var table strings.Builder
	fmt.Fprintf(&table, "| surface | %s |\n|---|%s\n", strings.Join(stores, " | "), strings.Repeat("---|", len(stores)))
	leaks := 0
	for _, s := range names {
		fmt.Fprintf(&table, "| %s |", s)
		for _, st := range stores {
			v, ok := canaries[st]
			switch {
			case !ok:
				table.WriteString(" skipped |")
			case strings.Contains(surfaces[s], v):
				leaks++
				i := strings.Index(surfaces[s], v)
				t.Errorf("%s leaks the %s canary: …%s…", s, st, surfaces[s][max(0, i-80):min(len(surfaces[s]), i+40)])
				table.WriteString(" LEAK |")
			default:
				table.WriteString(" 0 |")
			}
		}
		table.WriteString("\n")
	}
	for st, why := range skipped {
		fmt.Fprintf(&table, "\n%s skipped: %s", st, why)
	}
	t.Logf("result as the agent sees it: %s\nerror: %.300s", surfaces["results"], surfaces["errors"])
	t.Logf("canary runs (leaks: %d):\n%s", leaks, table.String())
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
