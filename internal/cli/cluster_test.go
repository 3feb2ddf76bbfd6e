package cli

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/redistest"
)

// replica is one `agent-tools serve --http` running in this process.
type replica struct {
	id, url string
	stop    context.CancelFunc
	done    chan struct{}
}

const clusterKey = "test-cluster-key-0123456789abcdefghijklmnop"

// startReplica runs serve --http for dir with its own replica id and waits
// for its "serving" log line (the listener is open by then).
func startReplica(t *testing.T, dir, id string, env map[string]string, extra ...string) *replica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	r := &replica{id: id, url: "http://" + addr, stop: cancel, done: make(chan struct{})}
	lookup := func(k string) (string, bool) {
		switch k {
		case "AGENT_TOOLS_REPLICA_ID":
			return id, true
		case "AGENT_TOOLS_CLUSTER_KEY":
			return clusterKey, true
		}
		v, ok := env[k]
		return v, ok
	}
	args := append([]string{"serve", "--http", "--addr", addr, "--log-level", "warn"}, extra...)
	go func() {
		defer close(r.done)
		defer pw.Close()
		Run(ctx, &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: pw, LookupEnv: lookup, Dir: dir}, args)
	}()
	go func() { // keep the replica's stderr flowing
		// The pipe ends with EOF when the replica returns; a copy error
		// only means its log lines are lost, which this test never reads.
		_, _ = io.Copy(io.Discard, pr)
	}()
	// Ready once /healthz answers: the listener is open (bounded wait).
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(r.url + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-r.done:
			t.Fatalf("replica %s exited", id)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Cleanup(func() { r.kill() })
	return r
}

func (r *replica) kill() {
	r.stop()
	<-r.done
}

// roundRobin forwards each request to the next replica in turn.
func roundRobin(t *testing.T, rs ...*replica) *httptest.Server {
	var n atomic.Int64
	var targets []*url.URL
	for _, r := range rs {
		u, _ := url.Parse(r.url)
		targets = append(targets, u)
	}
	p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(targets[int(n.Add(1)-1)%len(targets)])
		pr.Out.Host = pr.In.Host
	}, FlushInterval: -1}
	s := httptest.NewServer(p)
	t.Cleanup(s.Close)
	return s
}

func clusterProject(t *testing.T, extraYAML string) string {
	t.Helper()
	dir := t.TempDir()
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("deploy", "#!/bin/sh\n# @description Deploy to an environment.\n# @param *env string Where\necho \"deployed $AGENT_TOOLS_PARAM_ENV\"\n")
	write("broken", "#!/bin/sh\n# @description Always fails.\n# @readonly\necho run >> \"$AGENT_TOOLS_WORKDIR/broken.count\"\necho nope >&2\nexit 3\n")
	cfg := "mode: flat\npolicy:\n  confirm: token\naudit:\n  path: audit.jsonl\nserver:\n  redis: {url: \"${REDIS_URL}\"}\n" + extraYAML
	if err := os.WriteFile(filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func connectURL(t *testing.T, u string, hdr http.Header) *sdk.ClientSession {
	t.Helper()
	return connectVersion(t, u, hdr, "")
}

// connectVersion is connectURL speaking protocol version v ("" = the
// client's newest).
func connectVersion(t *testing.T, u string, hdr http.Header, v string) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerRT{hdr}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cluster-test", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: u + "/mcp", HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type headerRT struct{ h http.Header }

func (rt headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	for k, v := range rt.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func errorOf(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if !res.IsError {
		return nil
	}
	var body struct {
		Error map[string]any `json:"error"`
	}
	_ = json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &body)
	return body.Error
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestClusterStateless: three stateless replicas behind a round-robin proxy
// with Redis: a token issued by one is redeemed on another exactly once; the
// loop guard counts identical failures across replicas; audit records name
// their replica; Redis killed mid-test degrades /readyz but calls go on.
func TestClusterStateless(t *testing.T) {
	srv := redistest.Start(t)
	dir := clusterProject(t, "")
	env := map[string]string{"REDIS_URL": srv.URL}
	rs := []*replica{
		startReplica(t, dir, "r1", env, "--stateless"),
		startReplica(t, dir, "r2", env, "--stateless"),
		startReplica(t, dir, "r3", env, "--stateless"),
	}
	lb := roundRobin(t, rs...)
	cs := connectURL(t, lb.URL, nil)
	tokenAndLoopGuardAcross(t, cs, dir)

	// Redis goes away: degraded, still answering; back: ready again.
	srv.Stop()
	if st, body := readyz(t, rs[0].url); st != 200 || body["status"] != "degraded" {
		t.Fatalf("readyz without Redis = %d %v", st, body)
	}
	if res := callTool(t, cs, "deploy", map[string]any{"env": "dev"}); errorOf(t, res)["code"] != "CONFIRMATION_REQUIRED" {
		t.Fatalf("call during the outage: %+v", res)
	}
	srv.Restart()
	if st, body := readyz(t, rs[0].url); st != 200 || body["status"] != "ready" {
		t.Fatalf("readyz after Redis returned = %d %v", st, body)
	}

	// Every replica served and audited with its own id (read once they
	// stopped: the audit file is buffered until shutdown or 100 ms).
	for _, r := range rs {
		r.kill()
	}
	audit, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	for _, r := range rs {
		if !strings.Contains(string(audit), `"replica":"`+r.id+`"`) {
			t.Errorf("no audit record from %s", r.id)
		}
	}
	if !strings.Contains(string(audit), `"request_id":"`) || !strings.Contains(string(audit), `"identity":"process:`) {
		t.Errorf("audit lacks request id or identity:\n%s", audit)
	}
}

// TestClusterPerRequestOnDefaultEndpoint: replicas serving sessions (no
// --stateless) behind a round-robin proxy: a 2026-07-28 client needs no
// sticky routing, its confirmation token is redeemed on another replica
// and the loop guard counts its failures across replicas (both keyed by
// its identity: it has no session), while a session client on each
// replica works beside it.
func TestClusterPerRequestOnDefaultEndpoint(t *testing.T) {
	srv := redistest.Start(t)
	dir := clusterProject(t, "")
	env := map[string]string{"REDIS_URL": srv.URL}
	rs := []*replica{startReplica(t, dir, "d1", env), startReplica(t, dir, "d2", env), startReplica(t, dir, "d3", env)}
	var legacy []*sdk.ClientSession
	for _, r := range rs {
		cs := connectVersion(t, r.url, nil, "2025-11-25")
		if !strings.HasPrefix(cs.ID(), r.id+".") {
			t.Fatalf("session id %q does not name replica %s", cs.ID(), r.id)
		}
		legacy = append(legacy, cs)
	}
	lb := roundRobin(t, rs...)
	cs := connectVersion(t, lb.URL, nil, "2026-07-28")
	if cs.ID() != "" || cs.InitializeResult().ProtocolVersion != "2026-07-28" {
		t.Fatalf("per-request client: session %q, version %s", cs.ID(), cs.InitializeResult().ProtocolVersion)
	}
	tokenAndLoopGuardAcross(t, cs, dir)
	for i, l := range legacy {
		if e := errorOf(t, callTool(t, l, "deploy", map[string]any{"env": "staging"})); e["code"] != "CONFIRMATION_REQUIRED" {
			t.Errorf("session client on %s: %v", rs[i].id, e)
		}
	}
}

// tokenAndLoopGuardAcross: through cs, whose calls a round-robin proxy
// spreads over replicas, a confirmation token is redeemed once on another
// replica, and identical failures are refused from the third on.
func tokenAndLoopGuardAcross(t *testing.T, cs *sdk.ClientSession, dir string) {
	t.Helper()
	// A token from one replica, redeemed on whichever answers next, once.
	e := errorOf(t, callTool(t, cs, "deploy", map[string]any{"env": "prod"}))
	tok, _ := e["confirm_token"].(string)
	if e["code"] != "CONFIRMATION_REQUIRED" || tok == "" {
		t.Fatalf("first call: %v", e)
	}
	// Python-style spacing is the same call (canonical argument hash).
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "deploy", Arguments: json.RawMessage(`{ "env": "prod", "agent_tools_confirm": "` + tok + `" }`)})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "deployed prod") {
		t.Fatalf("redeem on another replica: %v %+v", err, res)
	}
	if e := errorOf(t, callTool(t, cs, "deploy", map[string]any{"env": "prod", "agent_tools_confirm": tok})); e["code"] != "CONFIRMATION_REQUIRED" {
		t.Fatalf("second redemption must fail: %v", e)
	}

	// The loop guard: identical failures spread over three replicas.
	var codes []string
	for range 8 {
		e := errorOf(t, callTool(t, cs, "broken", nil))
		codes = append(codes, fmt.Sprint(e["code"]))
	}
	want := "BACKEND_ERROR BACKEND_ERROR REPEATED_FAILURE REPEATED_FAILURE REPEATED_FAILURE REPEATED_FAILURE REPEATED_FAILURE REPEATED_FAILURE"
	if got := strings.Join(codes, " "); got != want {
		t.Errorf("codes = %s\nwant    %s", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "broken.count"))
	if n := strings.Count(string(b), "run"); n != 6 {
		t.Errorf("the backend ran %d times, want 6 (refused from the 7th)", n)
	}
}

func readyz(t *testing.T, base string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// TestClusterRateLimit: one bucket per identity across replicas.
func TestClusterRateLimit(t *testing.T) {
	srv := redistest.Start(t)
	dir := clusterProject(t, "  http:\n    tokens: [\"${TOK}\"]\n    rateLimit: {perSecond: 1, burst: 4}\n")
	env := map[string]string{"REDIS_URL": srv.URL, "TOK": "secret-token-value-123"}
	rs := []*replica{startReplica(t, dir, "a1", env, "--stateless"), startReplica(t, dir, "a2", env, "--stateless"), startReplica(t, dir, "a3", env, "--stateless")}
	lb := roundRobin(t, rs...)
	ok, limited := 0, 0
	for range 9 {
		req, _ := http.NewRequest(http.MethodPost, lb.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer secret-token-value-123")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			limited++
		default:
			ok++
		}
	}
	// Burst 4 for the whole cluster (a fifth may refill during the loop).
	if ok < 4 || ok > 5 || limited < 4 {
		t.Errorf("allowed %d, limited %d: want one shared bucket of 4", ok, limited)
	}
}

// TestClusterSessions: a stateful session lives on the replica whose name
// its id carries; another replica answers 421 while the owner lives and 404
// once it is gone; replicas with different files are reported by /readyz.
func TestClusterSessions(t *testing.T) {
	srv := redistest.Start(t)
	dir := clusterProject(t, "")
	env := map[string]string{"REDIS_URL": srv.URL}
	s1 := startReplica(t, dir, "s1", env)
	s2 := startReplica(t, dir, "s2", env)

	cs := connectVersion(t, s1.url, nil, "2025-11-25") // a session version: 2026-07-28 has no session

	id := cs.ID()
	if !strings.HasPrefix(id, "s1.") {
		t.Fatalf("session id %q does not name its replica", id)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	post := func(base string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post(s2.url); resp.StatusCode != http.StatusMisdirectedRequest || resp.Header.Get("X-Agent-Tools-Replica") != "s1" {
		t.Errorf("misrouted: %d owner %q", resp.StatusCode, resp.Header.Get("X-Agent-Tools-Replica"))
	}

	// A third replica serving a different catalog is reported.
	other := clusterProject(t, "")
	mustWrite(t, filepath.Join(other, ".agents", "tools", "extra"), []byte("#!/bin/sh\n# @description Only here.\n# @readonly\necho x\n"), 0o755)
	s3 := startReplica(t, other, "s3", env)
	if st, body := readyz(t, s1.url); st != 200 || body["status"] != "degraded" || !strings.Contains(fmt.Sprint(body["mismatched_replicas"]), "s3") {
		t.Errorf("readyz with a mismatched replica = %d %v", st, body)
	}
	s3.kill()

	s1.kill()
	if resp := post(s2.url); resp.StatusCode != http.StatusNotFound {
		t.Errorf("owner gone: %d, want 404", resp.StatusCode)
	}
}

// TestDoctorSharedState: doctor says where shared state lives, and that
// Redis is unreachable, without showing the URL's password.
func TestDoctorSharedState(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	dir := clusterProject(t, "")
	var out strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard, Dir: dir, LookupEnv: func(k string) (string, bool) {
		if k == "REDIS_URL" {
			return fmt.Sprintf("redis://app:doctor-secret-pw@127.0.0.1:%d/0", port), true
		}
		return "", false
	}}
	Run(context.Background(), env, []string{"doctor"})
	got := out.String()
	if !strings.Contains(got, "shared state") || !strings.Contains(got, "unreachable") || strings.Contains(got, "doctor-secret-pw") {
		t.Errorf("doctor:\n%s", got)
	}
}
