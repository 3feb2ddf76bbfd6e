package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// Tokens of the console cluster test: the agent calls, ops is an operator
// who may call everything, viewer an operator whom a rule denies deploy.
const (
	agentTok  = "agent-token-0123456789abcdef"
	opsTok    = "ops-token-0123456789abcdef"
	personTok = "person-token-0123456789abcdef" // a person's console login (use: console): only it approves
	viewerTok = "viewer-token-0123456789abcdef"
)

// raceSlack scales the timing bounds below: the figures (a decision on
// another replica resumes its call within 1 s; a list change reaches every
// replica's sessions within 1 s, a pin approval within 2 s) are asserted
// as such without the race detector, and at three times under it. Every
// figure is measured and logged either way (go test -v).
func raceSlack() time.Duration {
	if raceEnabled {
		return 3
	}
	return 1
}

// stickyProxy is the load balancer: a request carrying Mcp-Session-Id goes
// to the replica its id names (<replica>.<random>.<mac>), as an ingress
// hashing on the header would keep it; every other request — an
// initialize, and each request of a 2026-07-28 client — goes to the next
// replica in turn. served counts requests per replica.
type stickyProxy struct {
	*httptest.Server
	mu     sync.Mutex
	served map[string]int
}

func newStickyProxy(t *testing.T, rs ...*replica) *stickyProxy {
	var n atomic.Int64
	byID := map[string]*url.URL{}
	var order []string
	for _, r := range rs {
		u, _ := url.Parse(r.url)
		byID[r.id] = u
		order = append(order, r.id)
	}
	p := &stickyProxy{served: map[string]int{}}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		var id string
		if sid := pr.In.Header.Get("Mcp-Session-Id"); sid != "" {
			if owner, _, ok := strings.Cut(sid, "."); ok && byID[owner] != nil {
				id = owner
			}
		}
		if id == "" {
			id = order[int(n.Add(1)-1)%len(order)]
		}
		p.mu.Lock()
		p.served[id]++
		p.mu.Unlock()
		pr.SetURL(byID[id])
		pr.Out.Host = pr.In.Host
	}, FlushInterval: -1}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

// watched is an MCP client that records when it is told list_changed.
type watched struct {
	name    string
	replica string // where its session (legacy) or listen stream (modern) is
	cs      *sdk.ClientSession
	changed chan time.Time
}

func connectWatched(t *testing.T, endpoint, tok, version, name string) *watched {
	t.Helper()
	w := &watched{name: name, changed: make(chan time.Time, 64)}
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case w.changed <- time.Now():
			default:
			}
		},
	})
	hc := &http.Client{Transport: headerRT{http.Header{"Authorization": {"Bearer " + tok}}}}
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: endpoint + "/mcp", HTTPClient: hc, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	w.cs = cs
	return w
}

// drain forgets the notices received so far.
func (w *watched) drain() {
	for {
		select {
		case <-w.changed:
		default:
			return
		}
	}
}

// tool returns the listed tool name's description, and whether it is listed.
func (w *watched) tool(t *testing.T, name string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lt, err := w.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("%s: tools/list: %v", w.name, err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == name {
			return tl.Description, true
		}
	}
	return "", false
}

// toldAfter waits (up to 20 s) for a list_changed received after start
// following which cond holds of w's list, and returns how long after start
// it arrived.
func (w *watched) toldAfter(t *testing.T, start time.Time, what string, cond func(w *watched) bool) time.Duration {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case at := <-w.changed:
			if at.Before(start) || !cond(w) {
				continue
			}
			return at.Sub(start)
		case <-deadline:
			t.Fatalf("%s (%s): no list_changed after %s within 20 s", w.name, w.replica, what)
		}
	}
}

// consoleAPI calls a replica's console API with a bearer token.
func consoleAPI(t *testing.T, base, tok, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/ui/api"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// personAPI is consoleAPI as a person: logged in at base's login form with
// the console-only token, the cookie and the page's CSRF token on the
// request. A bearer token (opsTok) cannot approve: it is an agent's too.
func personAPI(t *testing.T, base, method, path, body string) (int, map[string]any) {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(base+"/ui/login", url.Values{"token": {personTok}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "agent_tools_console" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("person login on %s: %d, no cookie", base, resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/ui/", nil)
	req.AddCookie(cookie)
	page, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(page.Body)
	page.Body.Close()
	const marker = `<meta name="csrf-token" content="`
	i := strings.Index(string(b), marker)
	if i < 0 {
		t.Fatalf("no csrf meta on %s", base)
	}
	rest := string(b)[i+len(marker):]
	csrf := rest[:strings.IndexByte(rest, '"')]
	req, _ = http.NewRequest(method, base+"/ui/api"+path, strings.NewReader(body))
	req.AddCookie(cookie)
	req.Header.Set("X-CSRF-Token", csrf)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

type pendingCall struct {
	ID, Tool, Client, Replica, Session string
}

func pendingOn(t *testing.T, base string) []pendingCall {
	t.Helper()
	st, body := consoleAPI(t, base, opsTok, "GET", "/approvals", "")
	if st != http.StatusOK {
		t.Fatalf("GET approvals on %s: %d %v", base, st, body)
	}
	b, _ := json.Marshal(body["approvals"])
	var out []pendingCall
	_ = json.Unmarshal(b, &out)
	return out
}

// sessionsActive reads a replica's agent_tools_sessions_active gauge.
func sessionsActive(t *testing.T, base string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+opsTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "agent_tools_sessions_active "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return -1
}

type callResult struct {
	text string
	err  bool
	at   time.Time
}

func callAsync(cs *sdk.ClientSession, tool string, args map[string]any) <-chan callResult {
	done := make(chan callResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		switch {
		case err != nil:
			done <- callResult{err.Error(), true, time.Now()}
		default:
			done <- callResult{strings.TrimSpace(res.Content[0].(*sdk.TextContent).Text), res.IsError, time.Now()}
		}
	}()
	return done
}

func waitCall(t *testing.T, done <-chan callResult, what string) callResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: the call did not return within 60 s", what)
	}
	return callResult{}
}

// TestClusterConsoleAcrossReplicas: three replicas (serve --http each),
// a load balancer that keeps sessions on their replica and spreads
// everything else round-robin, one redis-server; on every replica a
// session client (2025-11-25) and a per-request client (2026-07-28) side
// by side.
//
//   - A call waiting for a person on replica 1 is listed by replica 3's
//     console API and decided there (by an operator the gate lets approve
//     it, on replica 3); the call resumes and completes on replica 1, and
//     "for this session" holds for the session's next call there. A
//     per-request client's call, on whichever replica the balancer chose,
//     is decided on another; a denial on a third.
//   - A pin approved through replica 2's console reaches the sessions of
//     replicas 1 and 3 as list_changed, with the tool back in their lists.
//   - A provider switched off and on through replica 2's console does too.
//
// The latencies are logged (go test -v) and bounded (raceSlack).
func TestClusterConsoleAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	greet := func(desc string) []byte {
		return []byte("#!/bin/sh\n# @description " + desc + "\n# @readonly\necho hello\n")
	}
	mustWrite(t, filepath.Join(tools, "deploy"), []byte("#!/bin/sh\n# @description Deploy to an environment.\n# @param *env string Where\necho \"deployed $AGENT_TOOLS_PARAM_ENV\"\n"), 0o755)
	mustWrite(t, filepath.Join(tools, "greet"), greet("Say hello."), 0o755)
	cfg := `mode: flat
policy:
  confirm: human
  operators: ["token:ops", "token:viewer", "token:ana"]
  rules:
    - identities: ["token:viewer"]
      deny: [deploy]
security: {pin: quarantine}
audit: {path: "off"}
server:
  redis: {url: "${REDIS_URL}"}
  http:
    tokens:
      - {name: agent, token: "${AGENT_TOK}"}
      - {name: ops, token: "${OPS_TOK}"}
      - {name: viewer, token: "${VIEWER_TOK}"}
      - {name: ana, token: "${PERSON_TOK}", use: console}
`
	mustWrite(t, filepath.Join(dir, "agent-tools.yaml"), []byte(cfg), 0o644)
	env := map[string]string{"REDIS_URL": srv.URL, "AGENT_TOK": agentTok, "OPS_TOK": opsTok, "VIEWER_TOK": viewerTok, "PERSON_TOK": personTok}
	rs := []*replica{startReplica(t, dir, "c1", env), startReplica(t, dir, "c2", env), startReplica(t, dir, "c3", env)}
	byID := map[string]*replica{}
	for _, r := range rs {
		byID[r.id] = r
	}
	lb := newStickyProxy(t, rs...)

	// Side by side on each replica: a session client (through the
	// balancer, which keeps it there) and a per-request client listening
	// for list changes on that replica.
	legacy := map[string]*watched{}
	for i := 0; len(legacy) < len(rs); i++ {
		if i >= 3*len(rs) {
			t.Fatalf("the balancer did not spread sessions over every replica: %v", legacy)
		}
		w := connectWatched(t, lb.URL, agentTok, "2025-11-25", fmt.Sprint("legacy-", i))
		w.replica, _, _ = strings.Cut(w.cs.ID(), ".")
		if legacy[w.replica] == nil {
			legacy[w.replica] = w
		}
	}
	modern := map[string]*watched{}
	for _, r := range rs {
		w := connectWatched(t, r.url, agentTok, "2026-07-28", "modern-"+r.id)
		if w.cs.ID() != "" {
			t.Fatalf("a 2026-07-28 client got a session: %q", w.cs.ID())
		}
		w.replica = r.id
		modern[r.id] = w
	}
	// Changes count only once every listener is there to hear them: a
	// replica's gauge counts its session and the listen stream.
	for _, r := range rs {
		testutil.WaitFor(t, "the session and the listener on "+r.id, 20*time.Second, func() bool { return sessionsActive(t, r.url) >= 2 })
	}
	every := func() []*watched {
		var out []*watched
		for _, r := range rs {
			out = append(out, legacy[r.id], modern[r.id])
		}
		return out
	}

	t.Run("approvals", func(t *testing.T) {
		// 1. Started on replica 1, listed everywhere, decided on replica 3.
		done := callAsync(legacy["c1"].cs, "deploy", map[string]any{"env": "prod"})
		var p pendingCall
		testutil.WaitFor(t, "the waiting call on c3's console", 20*time.Second, func() bool {
			l := pendingOn(t, byID["c3"].url)
			if len(l) == 1 {
				p = l[0]
			}
			return len(l) == 1
		})
		if p.Tool != "deploy" || p.Replica != "c1" || p.Client != legacy["c1"].name || p.Session == "" {
			t.Fatalf("c3 lists %+v", p)
		}
		for _, r := range []string{"c1", "c2"} {
			if l := pendingOn(t, byID[r].url); len(l) != 1 || l[0].ID != p.ID {
				t.Fatalf("%s lists %+v", r, l)
			}
		}
		// The gate decides on replica 3: an operator denied the tool, and
		// a non-operator, may not approve it.
		if st, body := consoleAPI(t, byID["c3"].url, viewerTok, "POST", "/approvals/"+p.ID, `{"approve":true}`); st != http.StatusForbidden {
			t.Fatalf("an operator who may not call deploy approved it: %d %v", st, body)
		}
		if st, _ := consoleAPI(t, byID["c3"].url, agentTok, "POST", "/approvals/"+p.ID, `{"approve":true}`); st != http.StatusForbidden {
			t.Fatalf("a non-operator reached the approvals: %d", st)
		}
		start := time.Now()
		if st, body := personAPI(t, byID["c3"].url, "POST", "/approvals/"+p.ID, `{"approve":true,"remember":"session"}`); st != http.StatusOK {
			t.Fatalf("approve on c3: %d %v", st, body)
		}
		r := waitCall(t, done, "the call approved on c3")
		took := r.at.Sub(start)
		t.Logf("approval decided on c3 -> the call on c1 completed after %v", took)
		if r.err || r.text != "deployed prod" {
			t.Fatalf("the approved call: %+v", r)
		}
		if limit := time.Second * raceSlack(); took > limit {
			t.Errorf("the approved call completed %v after the decision, want under %v", took, limit)
		}
		if st, _ := personAPI(t, byID["c2"].url, "POST", "/approvals/"+p.ID, `{"approve":true}`); st != http.StatusNotFound {
			t.Errorf("a second answer, on c2: %d, want 404", st)
		}
		// "For this session" was remembered where the session lives.
		r = waitCall(t, callAsync(legacy["c1"].cs, "deploy", map[string]any{"env": "prod"}), "the session's next call")
		if r.err || r.text != "deployed prod" {
			t.Fatalf("the session's next call: %+v", r)
		}

		// 2. A per-request client through the balancer: its call waits on
		// whichever replica got it and is decided on another.
		perRequest := connectWatched(t, lb.URL, agentTok, "2026-07-28", "modern-lb")
		done = callAsync(perRequest.cs, "deploy", map[string]any{"env": "staging"})
		testutil.WaitFor(t, "the per-request call on c1's console", 20*time.Second, func() bool {
			l := pendingOn(t, byID["c1"].url)
			if len(l) == 1 {
				p = l[0]
			}
			return len(l) == 1
		})
		decider := rs[0]
		for _, r := range rs {
			if r.id != p.Replica {
				decider = r
				break
			}
		}
		if p.Client != "modern-lb" || p.Session != "" || byID[p.Replica] == nil || decider.id == p.Replica {
			t.Fatalf("the per-request call: %+v (decided on %s)", p, decider.id)
		}
		start = time.Now()
		if st, body := personAPI(t, decider.url, "POST", "/approvals/"+p.ID, `{"approve":true}`); st != http.StatusOK {
			t.Fatalf("approve on %s: %d %v", decider.id, st, body)
		}
		r = waitCall(t, done, "the per-request call")
		took = r.at.Sub(start)
		t.Logf("approval decided on %s -> the per-request call on %s completed after %v", decider.id, p.Replica, took)
		if r.err || r.text != "deployed staging" {
			t.Fatalf("the per-request call: %+v", r)
		}
		if limit := time.Second * raceSlack(); took > limit {
			t.Errorf("the per-request call completed %v after the decision, want under %v", took, limit)
		}

		// 3. Denied on replica 1, for a session on replica 2.
		done = callAsync(legacy["c2"].cs, "deploy", map[string]any{"env": "dev"})
		testutil.WaitFor(t, "c2's call on c1's console", 20*time.Second, func() bool {
			l := pendingOn(t, byID["c1"].url)
			if len(l) == 1 {
				p = l[0]
			}
			return len(l) == 1 && l[0].Replica == "c2"
		})
		if st, body := personAPI(t, byID["c1"].url, "POST", "/approvals/"+p.ID, `{"approve":false}`); st != http.StatusOK {
			t.Fatalf("deny on c1: %d %v", st, body)
		}
		if r := waitCall(t, done, "the denied call"); !r.err || !strings.Contains(r.text, "DENIED") {
			t.Fatalf("the denied call: %+v", r)
		}
		for _, r := range rs {
			if l := pendingOn(t, r.url); len(l) != 0 {
				t.Errorf("%s still lists %+v", r.id, l)
			}
		}
	})

	t.Run("pin approved on c2", func(t *testing.T) {
		// greet's definition changes on disk: every replica holds it
		// (quarantine) and tells its own sessions.
		for _, w := range every() {
			w.drain()
		}
		tmp := filepath.Join(dir, "greet.new")
		mustWrite(t, tmp, greet("Say hello, politely."), 0o755)
		changedAt := time.Now()
		if err := os.Rename(tmp, filepath.Join(tools, "greet")); err != nil { // whole, never half-written
			t.Fatal(err)
		}
		for _, w := range every() {
			w.toldAfter(t, changedAt, "greet changed", func(w *watched) bool { _, ok := w.tool(t, "greet"); return !ok })
		}
		start := time.Now()
		if st, body := consoleAPI(t, byID["c2"].url, opsTok, "POST", "/pins/greet/approve", ""); st != http.StatusOK {
			t.Fatalf("approve the pin on c2: %d %v", st, body)
		}
		for _, w := range every() {
			took := w.toldAfter(t, start, "the pin approved on c2", func(w *watched) bool {
				d, ok := w.tool(t, "greet")
				return ok && d == "Say hello, politely."
			})
			t.Logf("pin approved on c2 -> list_changed on %s's %s client after %v", w.replica, strings.Split(w.name, "-")[0], took)
			if limit := 2 * time.Second * raceSlack(); took > limit && w.replica != "c2" {
				t.Errorf("%s on %s was told after %v, want under %v", w.name, w.replica, took, limit)
			}
		}
	})

	t.Run("provider toggled on c2", func(t *testing.T) {
		for _, on := range []bool{false, true} {
			for _, w := range every() {
				w.drain()
			}
			start := time.Now()
			if st, body := consoleAPI(t, byID["c2"].url, opsTok, "PUT", "/providers/local", fmt.Sprintf(`{"enabled":%v}`, on)); st != http.StatusOK {
				t.Fatalf("toggle local to %v on c2: %d %v", on, st, body)
			}
			for _, w := range every() {
				took := w.toldAfter(t, start, fmt.Sprintf("local switched to %v on c2", on), func(w *watched) bool {
					_, ok := w.tool(t, "deploy")
					return ok == on
				})
				t.Logf("local switched %s on c2 -> list_changed on %s's %s client after %v", map[bool]string{true: "on", false: "off"}[on], w.replica, strings.Split(w.name, "-")[0], took)
				if limit := time.Second * raceSlack(); took > limit && w.replica != "c2" {
					t.Errorf("%s on %s was told after %v, want under %v", w.name, w.replica, took, limit)
				}
			}
		}
	})

	t.Run("console login on every replica", func(t *testing.T) {
		// A browser behind the balancer: logged in on c1, it is on c3 too,
		// and logging out on c2 ends it everywhere.
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.PostForm(byID["c1"].url+"/ui/login", url.Values{"token": {opsTok}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var cookie *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == "agent_tools_console" {
				cookie = c
			}
		}
		if resp.StatusCode != http.StatusSeeOther || cookie == nil {
			t.Fatalf("login on c1: %d, cookie %v", resp.StatusCode, cookie)
		}
		get := func(base, path string) (int, string) {
			req, _ := http.NewRequest("GET", base+path, nil)
			req.AddCookie(cookie)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		st, page := get(byID["c3"].url, "/ui/approvals")
		_, rest, _ := strings.Cut(page, `<meta name="csrf-token" content="`)
		csrf, _, _ := strings.Cut(rest, `"`)
		if st != http.StatusOK || csrf == "" {
			t.Fatalf("c1's login on c3: %d (csrf %q)", st, csrf)
		}
		req, _ := http.NewRequest("POST", byID["c2"].url+"/ui/logout", nil)
		req.AddCookie(cookie)
		req.Header.Set("X-CSRF-Token", csrf)
		resp, err = noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("logout on c2: %d", resp.StatusCode)
		}
		for _, r := range rs {
			if st, _ := get(r.url, "/ui/api/approvals"); st != http.StatusUnauthorized {
				t.Errorf("after the logout %s answers %d, want 401", r.id, st)
			}
		}
	})

	lb.mu.Lock()
	defer lb.mu.Unlock()
	for _, r := range rs {
		if lb.served[r.id] == 0 {
			t.Errorf("the balancer sent nothing to %s: %v", r.id, lb.served)
		}
	}
	t.Logf("requests per replica through the balancer: %v", lb.served)
}
