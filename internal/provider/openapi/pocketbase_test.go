package openapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/openapi"
)

const (
	pbUser = "ann@example.com"
	pbPass = "pw-very-secret-1"
)

// pocketBase is a real PocketBase server (interop/pocketbase, its own Go
// module) on a free 127.0.0.1 port with a temporary data directory.
type pocketBase struct {
	url, admin string // admin: a superuser token
}

func startPocketBase(t *testing.T) *pocketBase {
	t.Helper()
	if openapi.RaceOn {
		t.Skip("PocketBase interop runs without the race detector (scripts/test.sh runs it once)")
	}
	bin := filepath.Join(t.TempDir(), "pocketbase")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "..", "..", "interop", "pocketbase")
	if out, err := build.CombinedOutput(); err != nil {
		s := string(out)
		if strings.Contains(s, "dial tcp") || strings.Contains(s, "no such host") || strings.Contains(s, "module lookup disabled") || strings.Contains(s, "executable file not found") {
			t.Skipf("PocketBase cannot be built here (its modules cannot be downloaded): %v\n%s", err, s)
		}
		t.Fatalf("building PocketBase: %v\n%s", err, s)
	}
	data := t.TempDir()
	if out, err := exec.Command(bin, "superuser", "upsert", "root@example.com", "root-pass-123", "--dir", data).CombinedOutput(); err != nil {
		t.Fatalf("superuser: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := exec.Command(bin, "serve", "--http", addr, "--dir", data)
	stdout, _ := srv.StdoutPipe()
	srv.Stderr = srv.Stdout
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() }) // killed: Wait reports the signal
	// PocketBase prints "Server started at http://…" when it listens.
	ready := make(chan struct{})
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if strings.Contains(sc.Text(), "Server started at") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("PocketBase did not start:\n%s", log.String())
	}
	pb := &pocketBase{url: "http://" + addr}
	var auth struct{ Token string }
	pb.do(t, "POST", "/api/collections/_superusers/auth-with-password", map[string]any{"identity": "root@example.com", "password": "root-pass-123"}, &auth)
	pb.admin = auth.Token
	rule := "@request.auth.id != ''"
	pb.do(t, "POST", "/api/collections", map[string]any{
		"name": "tasks", "type": "base",
		"fields":   []any{map[string]any{"name": "title", "type": "text", "required": true}, map[string]any{"name": "done", "type": "bool"}},
		"listRule": rule, "viewRule": rule, "createRule": rule, "updateRule": rule, "deleteRule": rule,
	}, nil)
	pb.do(t, "PATCH", "/api/collections/users", map[string]any{"authToken": map[string]any{"duration": 60}}, nil)
	pb.do(t, "POST", "/api/collections/users/records", map[string]any{"email": pbUser, "password": pbPass, "passwordConfirm": pbPass}, nil)
	return pb
}

// do is a superuser request made by the test itself (setup, revocation).
func (pb *pocketBase) do(t *testing.T, method, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, pb.url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if pb.admin != "" {
		req.Header.Set("Authorization", pb.admin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: HTTP %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPocketBase drives a real PocketBase through the whole runtime: the
// config file, the provider built by the kinds table, the pipeline's
// confirmation policy and an MCP client.
func TestPocketBase(t *testing.T) {
	pb := startPocketBase(t)
	dir := t.TempDir()
	spec, _ := filepath.Abs("testdata/pocketbase.yaml")
	cfg := fmt.Sprintf(`providers:
  - id: pb
    kind: openapi
    spec: %s
    baseURL: %s
    auth:
      login:
        path: /api/collections/users/auth-with-password
        body: { identity: "${PB_USER}", password: "${PB_PASS}" }
        token: /token
        header: Authorization
        prefix: ""
`, spec, pb.url)
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PB_USER": pbUser, "PB_PASS": pbPass}
	var audit bytes.Buffer
	var auditMu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Options{ProjectDir: dir, Mode: "progressive", AuditDefault: lockedWriter{&auditMu, &audit},
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p, _, ok := a.Registry().Provider("pb")
	if !ok {
		t.Fatal("provider pb not registered")
	}
	op, ok := provider.As[*openapi.Provider](p)
	if !ok {
		t.Fatalf("provider pb is %T", p)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := a.Facade.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callPB := func(tool string, args map[string]any, confirm bool) (string, map[string]any, bool) {
		t.Helper()
		in := map[string]any{"toolName": tool, "arguments": args}
		if confirm {
			in["confirm"] = true
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "agent_tools_pb_call", Arguments: in})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*sdk.TextContent).Text
		m, _ := res.StructuredContent.(map[string]any)
		return text, m, res.IsError
	}

	// A mutation needs confirmation, and nothing reaches PocketBase without it.
	text, _, isErr := callPB("tasks/create", map[string]any{"title": "Write the report"}, false)
	if !isErr || !strings.Contains(text, "CONFIRMATION_REQUIRED") || op.Logins() != 0 {
		t.Fatalf("unconfirmed create: %v %s (logins %d)", isErr, text, op.Logins())
	}
	text, created, isErr := callPB("tasks/create", map[string]any{"title": "Write the report"}, true)
	id, _ := created["id"].(string)
	if isErr || id == "" || created["title"] != "Write the report" {
		t.Fatalf("create: %s", text)
	}
	text, list, isErr := callPB("tasks/list", map[string]any{"filter": "done = false", "perPage": 10}, false)
	if isErr || !strings.Contains(text, id) || fmt.Sprint(list["totalItems"]) != "1" {
		t.Fatalf("list: %s", text)
	}
	text, got, isErr := callPB("tasks/get", map[string]any{"id": id}, false)
	if isErr || got["title"] != "Write the report" {
		t.Fatalf("get: %s", text)
	}
	if n := op.Logins(); n != 1 {
		t.Errorf("logins after three calls = %d, want 1 (the token is reused)", n)
	}

	// Expiry: PocketBase's tokens carry a JWT exp (60 s here). Widening the
	// renewal margin past it makes the provider see the real token as
	// expiring: every call now logs in anew. (A revoked token is not a 401
	// on PocketBase's record API, which serves an invalid token as a guest:
	// 404 or an empty list; the 401 → login → retry path is tested against
	// a stand-in in TestLoginFlow.)
	restore := openapi.SetExpirySkew(61 * time.Second)
	defer restore()
	for range 2 {
		if text, _, isErr := callPB("tasks/get", map[string]any{"id": id}, false); isErr {
			t.Fatalf("get with an expiring token: %s", text)
		}
	}
	if n := op.Logins(); n != 3 {
		t.Errorf("logins with expiring tokens = %d, want 3", n)
	}
	restore()

	if text, _, isErr := callPB("tasks/delete", map[string]any{"id": id}, true); isErr || !strings.Contains(text, "204") {
		t.Fatalf("delete: %s", text)
	}
	text, _, isErr = callPB("tasks/get", map[string]any{"id": id}, false)
	if !isErr || !strings.Contains(text, "BACKEND_ERROR") || !strings.Contains(text, `"status":404`) || !strings.Contains(text, "check the path parameters") {
		t.Fatalf("get after delete: %s", text)
	}

	auditMu.Lock()
	log := audit.String()
	auditMu.Unlock()
	secrets := op.Secrets()
	if len(secrets) < 3 {
		t.Errorf("Secrets() = %d values, want the identity, the password and the token", len(secrets))
	}
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("the audit log holds a secret")
		}
	}
	if !strings.Contains(log, "pb_tasks") {
		t.Errorf("audit log without the calls: %s", log)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
