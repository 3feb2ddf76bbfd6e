package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("MCPTEST_SERVER"); mode != "" {
		runTestServer(mode)
		os.Exit(0)
	}
	os.Exit(testutil.RunIsolated(m)) // tool-list caches out of the user's
}

// hostEnv is the "host" environment the child's minimal one is drawn from.
func hostEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/tester", "LANG=C.UTF-8", "LC_ALL=C", "SECRET_HOST=topsecret", "AWS_SECRET_ACCESS_KEY=nope"}
}

// stdioOptions runs the test binary as a server in mode; dir receives its
// start log and markers.
func stdioOptions(t *testing.T, mode string) (Options, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := map[string]string{"MCPTEST_SERVER": mode, "MCPTEST_DIR": dir}
	if testing.CoverMode() != "" {
		// A child built with -cover warns on stderr when GOCOVERDIR is unset,
		// and tests match the child's stderr exactly: give it a place to write.
		env["GOCOVERDIR"] = t.TempDir()
	}
	return Options{Header: provider.Header{ID: "ev", RequireConfirm: true}, Command: exe,
		Env:      env,
		CacheDir: filepath.Join(dir, "cache"), Environ: hostEnv,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second, StopGrace: 300 * time.Millisecond,
		StartTimeout: 20 * time.Second, ListWait: 20 * time.Second,
	}, dir
}

func newProvider(t *testing.T, o Options) *Provider {
	t.Helper()
	p := New(o)
	t.Cleanup(func() { p.Close() })
	return p
}

func starts(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "starts"))
	return strings.Count(string(b), "\n")
}

func names(tools []catalog.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func find(tools []catalog.Tool, name string) catalog.Tool {
	for _, t := range tools {
		if t.Name == name {
			return t
		}
	}
	return catalog.Tool{}
}

func call(t *testing.T, p *Provider, name, args string) (*provider.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Call(ctx, catalog.Tool{Provider: "ev", Name: name}, json.RawMessage(args))
}

func mustCall(t *testing.T, p *Provider, name, args string) *provider.Result {
	t.Helper()
	res, err := call(t, p, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

var wantCode = testutil.WantCode

// wantUnavailable fails the test unless err is a PROVIDER_UNAVAILABLE tool
// error: the usual outcome of a call on an upstream that is gone.
func wantUnavailable(t *testing.T, err error) {
	t.Helper()
	_ = wantCode(t, err, toolerr.ProviderUnavailable) // the code is all these callers check
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, what, 15*time.Second, cond)
}

// neverStarted reports that p has begun no start and has none scheduled.
// Whatever starts an upstream (Start, Tools, a call, the restart timer)
// does it through beginLocked, synchronously under p.mu: the state shows
// it at once, with nothing to wait for.
func neverStarted(p *Provider) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state == stateIdle && p.sess == nil && p.timer == nil
}

// awaitSlowStarted waits until the upstream runs a call of its slow tool
// (it writes slow-started into dir): the upstream is another process, and
// that file is the only sign the call reached it.
func awaitSlowStarted(t *testing.T, dir string) {
	t.Helper()
	eventually(t, "the slow call to reach the upstream", func() bool {
		_, err := os.Stat(filepath.Join(dir, "slow-started"))
		return err == nil
	})
}

func diag(p *Provider, item string) provider.Diagnostic {
	for _, d := range p.Diagnostics() {
		if d.Item == item {
			return d
		}
	}
	return provider.Diagnostic{}
}

var sdkTools = []string{"add", "addprompt", "addtool", "ask", "crash", "delete", "echo", "env", "fail", "flood", "image", "logs", "pids", "slow"}

func TestLazyStartAndDiskCache(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	ctx := context.Background()

	// No cache: the first list starts the upstream and fills the cache.
	p1 := newProvider(t, o)
	if d := diag(p1, "upstream"); !strings.HasPrefix(d.Reason, "idle") {
		t.Errorf("before anything: %+v", d)
	}
	tools, err := p1.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(tools); !slices.Equal(got, sdkTools) {
		t.Errorf("tools = %v", got)
	}
	if starts(dir) != 1 {
		t.Fatalf("starts = %d", starts(dir))
	}
	p1.Close()
	files, _ := filepath.Glob(filepath.Join(o.CacheDir, "ev-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files = %v", files)
	}

	// A second runtime answers from the cache and starts nothing...
	p2 := newProvider(t, o)
	if err := p2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cached, err := p2.Tools(ctx)
	if err != nil || !slices.Equal(names(cached), sdkTools) {
		t.Fatalf("cached tools = %v, %v", names(cached), err)
	}
	again, _ := p2.Tools(ctx)
	if &again[0] != &cached[0] {
		t.Error("Tools returned a new slice for an unchanged list")
	}
	if !neverStarted(p2) || starts(dir) != 1 {
		t.Fatalf("cache present but the upstream started (starts = %d)", starts(dir))
	}
	if d := diag(p2, "upstream"); !strings.HasPrefix(d.Reason, "cached") || d.Status != "ok" {
		t.Errorf("cached state: %+v", d)
	}
	// ...until the first call.
	if res := mustCall(t, p2, "echo", `{"text":"hi"}`); res.Text != "hi" {
		t.Errorf("echo = %+v", res)
	}
	if starts(dir) != 2 {
		t.Errorf("starts = %d after the first call", starts(dir))
	}
	if d := diag(p2, "upstream"); !strings.HasPrefix(d.Reason, "running") {
		t.Errorf("running state: %+v", d)
	}
	after, _ := p2.Tools(ctx)
	if &after[0] != &cached[0] {
		t.Error("the live list equals the cached one, but the slice changed")
	}

	// Other settings, other cache: a changed env var means no cached list.
	o3 := o
	o3.Env = map[string]string{"MCPTEST_SERVER": "sdk", "MCPTEST_DIR": dir, "EXTRA": "1"}
	if k1, k3 := cacheKey(o), cacheKey(o3); k1 == k3 {
		t.Error("cache key ignores env")
	}
	p3 := newProvider(t, o3)
	if _, err := p3.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if starts(dir) != 3 {
		t.Errorf("starts = %d; a changed config must not use the old cache", starts(dir))
	}
	data, _ := os.ReadFile(files[0])
	if strings.Contains(string(data), dir) {
		t.Error("cache file holds env values")
	}
}

func TestConcurrentFirstCallsStartOnce(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	p := newProvider(t, o)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			res, err := call(t, p, "echo", `{"text":"`+strconv.Itoa(i)+`"}`)
			if err == nil && res.Text != strconv.Itoa(i) {
				err = errors.New("wrong answer " + res.Text)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := starts(dir); n != 1 {
		t.Errorf("starts = %d", n)
	}
}

func TestResults(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	o.MaxResultBytes = 1000
	p := newProvider(t, o)

	res := mustCall(t, p, "add", `{"a":2,"b":40}`)
	if st, _ := json.Marshal(res.Structured); string(st) != `{"sum":42}` || res.IsError {
		t.Errorf("add = %+v (structured %s)", res, st)
	}
	res = mustCall(t, p, "image", `{}`)
	if res.Text != "a red dot\n[image/png, 15 bytes]" {
		t.Errorf("image text = %q", res.Text)
	}
	if img, ok := res.Content[len(res.Content)-1].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Errorf("image content = %#v", res.Content)
	}
	res = mustCall(t, p, "fail", `{}`)
	if !res.IsError || res.Text != "no such file" {
		t.Errorf("fail = %+v", res)
	}
	res = mustCall(t, p, "flood", `{"n":5000}`)
	if len(res.Text) > 1100 || !strings.Contains(res.Text, "[upstream result truncated: 1000 bytes of 5000 bytes kept]") {
		t.Errorf("flood text (%d bytes) ends %q", len(res.Text), res.Text[max(0, len(res.Text)-80):])
	}
	res = mustCall(t, p, "echo", ``) // no arguments: an empty object is sent
	if res.Text != "" {
		t.Errorf("echo without args = %+v", res)
	}
	_, err := call(t, p, "nope", `{}`)
	if te := wantCode(t, err, toolerr.UnknownTool); !strings.Contains(te.Message, "nope") {
		t.Errorf("unknown upstream tool: %v", te)
	}
	// The SDK's servers report bad arguments as a tool error.
	if res := mustCall(t, p, "add", `{"a":"x"}`); !res.IsError || !strings.Contains(res.Text, "validating") {
		t.Errorf("bad arguments = %+v", res)
	}
}

func TestPolicyData(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	o.ReadOnly = []string{"add", "missing"}
	p := newProvider(t, o)
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Annotations are not trusted by default.
	for name, want := range map[string]bool{"add": true, "echo": false, "delete": false} {
		if got := find(tools, name); got.ReadOnly != want || got.AlwaysConfirm {
			t.Errorf("untrusted %s: ReadOnly=%v AlwaysConfirm=%v", name, got.ReadOnly, got.AlwaysConfirm)
		}
	}
	if d := diag(p, "missing"); d.Status != "skipped" {
		t.Errorf("unknown readonly entry not diagnosed: %+v", d)
	}

	o2, _ := stdioOptions(t, "sdk")
	o2.TrustAnnotations = true
	p2 := newProvider(t, o2)
	tools, err = p2.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e := find(tools, "echo"); !e.ReadOnly {
		t.Error("trusted readOnlyHint ignored")
	}
	// readOnlyHint together with destructiveHint: never read-only, always confirm.
	if d := find(tools, "delete"); d.ReadOnly || !d.AlwaysConfirm {
		t.Errorf("delete = %+v", d)
	}
	if a := find(tools, "add"); a.ReadOnly {
		t.Error("add has no hint but is read-only")
	}
	if s := string(find(tools, "add").InputSchema); !strings.Contains(s, `"type":"object"`) {
		t.Errorf("schema = %s", s)
	}
	if info := p2.Info(); info.Kind != "mcp" || info.ID != "ev" || !info.RequireConfirm || info.HostLocal {
		t.Errorf("info = %+v", info)
	}
}

func TestMinimalEnvironment(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	p := newProvider(t, o)
	for name, want := range map[string]string{"SECRET_HOST": "<unset>", "AWS_SECRET_ACCESS_KEY": "<unset>", "HOME": "/home/tester", "LC_ALL": "C", "MCPTEST_SERVER": "sdk"} {
		if got := mustCall(t, p, "env", `{"name":"`+name+`"}`).Text; got != want {
			t.Errorf("child sees %s=%q, want %q", name, got, want)
		}
	}
	o2, _ := stdioOptions(t, "sdk")
	o2.Env["SECRET_HOST"] = "named-in-config"
	p2 := newProvider(t, o2)
	if got := mustCall(t, p2, "env", `{"name":"SECRET_HOST"}`).Text; got != "named-in-config" {
		t.Errorf("config env not passed: %q", got)
	}
}

func TestCrashRestartsWithBackoff(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	p := newProvider(t, o)
	mustCall(t, p, "echo", `{"text":"up"}`)

	// A call in flight when the upstream dies fails at once.
	slowErr := make(chan error, 1)
	go func() {
		_, err := call(t, p, "slow", `{"ms":20000}`)
		slowErr <- err
	}()
	awaitSlowStarted(t, dir)
	begin := time.Now()
	_, err := call(t, p, "crash", `{}`)
	te := wantCode(t, err, toolerr.ProviderUnavailable)
	if !strings.Contains(te.Message, "exit status 3") || !strings.Contains(te.Message, "crashing on purpose") {
		t.Errorf("crash message = %q", te.Message)
	}
	select {
	case err := <-slowErr:
		wantUnavailable(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight hung after the crash")
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("crash reported after %s", took)
	}

	// Restarted in the background, without waiting for a call.
	eventually(t, "the automatic restart", func() bool { return starts(dir) == 2 && strings.HasPrefix(diag(p, "upstream").Reason, "running") })
	if d := diag(p, "upstream"); !strings.Contains(d.Reason, "last error: upstream ended") {
		t.Errorf("doctor forgets the crash: %+v", d)
	}
	if res := mustCall(t, p, "echo", `{"text":"back"}`); res.Text != "back" {
		t.Errorf("after restart: %+v", res)
	}

	// Crashing again soon doubles the delay.
	_, err = call(t, p, "crash", `{}`)
	wantUnavailable(t, err)
	p.mu.Lock()
	failures, delay := p.failures, time.Until(p.nextTry)
	p.mu.Unlock()
	if failures != 2 || delay > 100*time.Millisecond {
		t.Errorf("after a second crash: failures %d, next try in %s", failures, delay)
	}
	eventually(t, "the second restart", func() bool { return starts(dir) == 3 && strings.HasPrefix(diag(p, "upstream").Reason, "running") })

	if got := []time.Duration{p.backoff(1), p.backoff(2), p.backoff(3), p.backoff(10), p.backoff(100)}; !slices.Equal(got,
		[]time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, time.Second, time.Second}) {
		t.Errorf("backoff = %v", got)
	}
}

func TestRestartsAreBounded(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	o.MaxRestarts = 2
	o.MinBackoff = 10 * time.Millisecond
	p := newProvider(t, o)
	for i := range 3 {
		eventually(t, "running", func() bool {
			_, err := call(t, p, "echo", `{}`)
			return err == nil
		})
		_, err := call(t, p, "crash", `{}`)
		wantUnavailable(t, err)
		_ = i
	}
	// The third crash is recorded on the session's watch goroutine, which
	// signals nothing: poll for it. Then no restart may be scheduled (the
	// timer, if any, is the one that fired after the second crash; Stop
	// reports whether it was still pending) and none may have begun.
	eventually(t, "the third crash recorded", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.state == stateFailed && p.failures == 3
	})
	p.mu.Lock()
	pending := p.timer != nil && p.timer.Stop()
	state := p.state
	p.mu.Unlock()
	if pending || state != stateFailed || starts(dir) != 3 {
		t.Errorf("still restarting by itself after MaxRestarts: restart pending %v, state %d, starts %d (want 3: the first and 2 restarts)", pending, state, starts(dir))
	}
	if d := diag(p, "upstream"); d.Status != "failed" {
		t.Errorf("doctor: %+v", d)
	}
	// A call still gets through (the delay is short here).
	eventually(t, "a call to restart it", func() bool {
		_, err := call(t, p, "echo", `{}`)
		return err == nil
	})
}

func TestDeadlineAndCancellation(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	p := newProvider(t, o)
	mustCall(t, p, "echo", `{}`)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := p.Call(ctx, catalog.Tool{Name: "slow"}, json.RawMessage(`{"ms":20000}`))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) > 3*time.Second {
		t.Fatalf("deadline: err %v after %s", err, time.Since(begin))
	}
	// The upstream was told (notifications/cancelled), and still works.
	eventually(t, "the upstream to see the cancellation", func() bool {
		_, err := os.Stat(filepath.Join(dir, "cancelled"))
		return err == nil
	})
	os.Remove(filepath.Join(dir, "cancelled"))

	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel2)
	_, err = p.Call(ctx2, catalog.Tool{Name: "slow"}, json.RawMessage(`{"ms":20000}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	eventually(t, "the upstream to see the cancellation", func() bool {
		_, err := os.Stat(filepath.Join(dir, "cancelled"))
		return err == nil
	})
	if res := mustCall(t, p, "echo", `{"text":"still here"}`); res.Text != "still here" {
		t.Errorf("after cancellation: %+v", res)
	}
	if starts(dir) != 1 {
		t.Error("a timeout restarted the upstream")
	}
}

func TestListChanged(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	changed := make(chan struct{}, 10)
	o.OnChange = func() { changed <- struct{}{} }
	p := newProvider(t, o)
	before, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	<-changed // the first list
	mustCall(t, p, "addtool", `{}`)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("OnChange not called after list_changed")
	}
	after, _ := p.Tools(context.Background())
	if !slices.Contains(names(after), "extra") || slices.Contains(names(before), "extra") {
		t.Errorf("before %v, after %v", names(before), names(after))
	}
	if res := mustCall(t, p, "extra", `{}`); res.Text != "extra!" {
		t.Errorf("extra = %+v", res)
	}
	// The cache follows.
	p2 := newProvider(t, o)
	cached, _ := p2.Tools(context.Background())
	if !slices.Contains(names(cached), "extra") {
		t.Errorf("cache not refreshed: %v", names(cached))
	}
}

func TestMisbehavingUpstream(t *testing.T) {
	o, _ := stdioOptions(t, "raw")
	p := newProvider(t, o)
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(tools); !slices.Equal(got, []string{"big", "echo", "garbage", "hang", "malformed", "notrpc", "tsbig"}) {
		t.Errorf("tools = %v", got)
	}
	if e := find(tools, "echo"); e.Description != "first" {
		t.Errorf("duplicate: kept %q", e.Description)
	}
	for item, want := range map[string]string{
		"echo":        "more than once; the first one is kept",
		"badschema":   "inputSchema is not a JSON object (got a string)",
		"arrayschema": "inputSchema has type array",
		"noschema":    "inputSchema is missing",
	} {
		if d := diag(p, item); d.Status != "skipped" || !strings.Contains(d.Reason, want) {
			t.Errorf("doctor line for %s: %+v", item, d)
		}
	}

	// 50 MB answers fail their own call (the limit's error, not the call's
	// 30 s deadline: no wall-clock bound needed), and the session survives.
	for _, name := range []string{"big", "tsbig"} {
		begin := time.Now()
		_, err := call(t, p, name, `{}`)
		te := wantCode(t, err, toolerr.BackendError)
		if !strings.Contains(te.Message, "message of 50.0 MiB, over the 16.0 MiB limit") {
			t.Errorf("%s: %v after %s", name, te, time.Since(begin))
		}
	}
	// A malformed answer fails its call at once.
	_, err = call(t, p, "malformed", `{}`)
	if te := wantCode(t, err, toolerr.BackendError); !strings.Contains(te.Message, "malformed") {
		t.Errorf("malformed: %v", te)
	}
	// Junk lines are dropped; the calls around them work.
	for _, name := range []string{"garbage", "notrpc", "echo"} {
		if res := mustCall(t, p, name, `{}`); res.Text != "ok "+name {
			t.Errorf("%s = %+v", name, res)
		}
	}
	var problems []string
	for _, d := range p.Diagnostics() {
		if d.Item == "protocol" {
			problems = append(problems, d.Reason)
		}
	}
	all := strings.Join(problems, "\n")
	for _, want := range []string{"Server listening on port 3000", `{\"hello\":\"world\"}`, "failed the call it answered"} {
		if !strings.Contains(all, want) {
			t.Errorf("protocol problems lack %q:\n%s", want, all)
		}
	}
	if d := diag(p, "upstream"); !strings.HasPrefix(d.Reason, "running") {
		t.Errorf("upstream = %+v", d)
	}
}

func TestUpstreamExitsAtOnce(t *testing.T) {
	o, _ := stdioOptions(t, "exit")
	o.MinBackoff = time.Hour
	p := newProvider(t, o)
	begin := time.Now()
	_, err := p.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exited during start-up (exit status 1; stderr: boom: missing configuration)") {
		t.Fatalf("Tools: %v", err)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	if d := diag(p, "upstream"); d.Status != "failed" || !strings.Contains(d.Reason, "boom") {
		t.Errorf("doctor: %+v", d)
	}
	// Later lists and calls fail fast, without a new attempt during the backoff.
	begin = time.Now()
	if _, err := p.Tools(context.Background()); err == nil {
		t.Error("second Tools succeeded")
	}
	_, err = call(t, p, "echo", `{}`)
	te := wantCode(t, err, toolerr.ProviderUnavailable)
	if te.Details["retry_after_ms"] == nil || time.Since(begin) > time.Second {
		t.Errorf("call: %+v after %s", te, time.Since(begin))
	}
}

func TestUpstreamNeverAnswers(t *testing.T) {
	o, _ := stdioOptions(t, "silent")
	o.StartTimeout = 300 * time.Millisecond
	p := newProvider(t, o)
	_, err := p.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "start-up timeout") {
		t.Fatalf("Tools: %v", err)
	}

	// Tools waits at most ListWait, then reports that it is still starting.
	o2, _ := stdioOptions(t, "silent")
	o2.ListWait = 100 * time.Millisecond
	p2 := newProvider(t, o2)
	begin := time.Now()
	_, err = p2.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "still starting") || time.Since(begin) > 2*time.Second {
		t.Fatalf("Tools: %v after %s", err, time.Since(begin))
	}
	// The wait is spent once: later lists (before every call of every
	// provider) do not stall again.
	begin = time.Now()
	for range 5 {
		if _, err := p2.Tools(context.Background()); err == nil {
			t.Fatal("Tools succeeded")
		}
	}
	if took := time.Since(begin); took > 50*time.Millisecond {
		t.Errorf("later lists waited %s", took)
	}
	if d := diag(p2, "upstream"); !strings.HasPrefix(d.Reason, "starting") {
		t.Errorf("doctor: %+v", d)
	}
}

func TestCommandNotFound(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	o.Command = "no-such-command-xyz"
	p := newProvider(t, o)
	_, err := p.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), `command "no-such-command-xyz" not found in PATH`) {
		t.Fatalf("Tools: %v", err)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil {
		return false
	}
	// A zombie still "exists": look at its state.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) < 3 || f[2] != "Z"
}

func TestCloseKillsProcessTree(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	p := New(o)
	res := mustCall(t, p, "pids", `{}`)
	var server, grandchild int
	if _, err := fmt.Sscan(res.Text, &server, &grandchild); err != nil {
		t.Fatalf("pids = %q", res.Text)
	}
	if !alive(server) || !alive(grandchild) {
		t.Fatal("processes not running")
	}
	slow := make(chan error, 1)
	go func() {
		_, err := call(t, p, "slow", `{"ms":20000}`)
		slow <- err
	}()
	awaitSlowStarted(t, dir) // in flight at Close
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-slow:
		wantUnavailable(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("call in flight hung at Close")
	}
	eventually(t, "the process tree to die", func() bool { return !alive(server) && !alive(grandchild) })
	_, err := call(t, p, "echo", `{}`)
	wantUnavailable(t, err)
	if _, err := p.Tools(context.Background()); err != nil {
		t.Errorf("Tools after Close still lists the last tools: %v", err)
	}
}

// httpUpstream serves the test server over Streamable HTTP, requiring a bearer token.
func httpUpstream(t *testing.T, opts *sdk.StreamableHTTPOptions) (*httptest.Server, *sdk.Server) {
	t.Helper()
	srv := newTestServer(t.TempDir())
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, opts)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, srv
}

func httpOptions(t *testing.T, url string) Options {
	return Options{Header: provider.Header{ID: "remote"}, URL: url, Headers: map[string]string{"Authorization": "Bearer t0ken"},
		CacheDir: t.TempDir(), MinBackoff: 50 * time.Millisecond, StopGrace: 300 * time.Millisecond,
	}
}

func TestHTTP(t *testing.T) {
	ts, _ := httpUpstream(t, nil)
	o := httpOptions(t, ts.URL)
	var changes atomic.Int32
	o.OnChange = func() { changes.Add(1) }
	p := newProvider(t, o)
	tools, err := p.Tools(context.Background())
	if err != nil || !slices.Equal(names(tools), sdkTools) {
		t.Fatalf("tools %v, %v", names(tools), err)
	}
	if res := mustCall(t, p, "echo", `{"text":"over http"}`); res.Text != "over http" {
		t.Errorf("echo = %+v", res)
	}
	if d := diag(p, "upstream"); !strings.Contains(d.Reason, "streamable-http") {
		t.Errorf("doctor: %+v", d)
	}
	// list_changed arrives over the standalone SSE stream.
	mustCall(t, p, "addtool", `{}`)
	eventually(t, "list_changed over HTTP", func() bool {
		tools, _ := p.Tools(context.Background())
		return slices.Contains(names(tools), "extra") && changes.Load() >= 2
	})
	// Deadlines hold over HTTP too.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Call(ctx, catalog.Tool{Name: "slow"}, json.RawMessage(`{"ms":20000}`)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}

	// Without the header the server refuses, and the error says so.
	o2 := httpOptions(t, ts.URL)
	o2.Headers = nil
	p2 := newProvider(t, o2)
	if _, err := p2.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("no token: %v", err)
	}
}

func TestHTTPFloodAndRestart(t *testing.T) {
	ts, _ := httpUpstream(t, &sdk.StreamableHTTPOptions{JSONResponse: true})
	o := httpOptions(t, ts.URL)
	o.MaxMessageBytes = 1 << 20
	p := newProvider(t, o)
	_, err := call(t, p, "flood", `{"n":3000000}`)
	if te := wantCode(t, err, toolerr.BackendError); !strings.Contains(te.Message, "over the 1.0 MiB limit") {
		t.Errorf("flood: %v", te)
	}
	if res := mustCall(t, p, "flood", `{"n":1000}`); len(res.Text) != 1000 {
		t.Errorf("small flood: %d bytes", len(res.Text))
	}

	// The server goes away: calls fail with PROVIDER_UNAVAILABLE, not a hang.
	ts.CloseClientConnections()
	ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.Call(ctx, catalog.Tool{Name: "echo"}, json.RawMessage(`{}`))
	wantUnavailable(t, err)
}

func TestSSEFallback(t *testing.T) {
	srv := newTestServer(t.TempDir())
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	o := httpOptions(t, ts.URL)
	p := newProvider(t, o)
	if res := mustCall(t, p, "echo", `{"text":"legacy"}`); res.Text != "legacy" {
		t.Errorf("echo = %+v", res)
	}
	if d := diag(p, "upstream"); !strings.Contains(d.Reason, ", sse,") {
		t.Errorf("doctor: %+v", d)
	}
}

func TestHTTPServerRestart(t *testing.T) {
	var current atomic.Pointer[http.Handler]
	boot := func() {
		srv := newTestServer(t.TempDir())
		var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		current.Store(&h)
	}
	boot()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	o := httpOptions(t, ts.URL)
	p := newProvider(t, o)
	mustCall(t, p, "echo", `{"text":"one"}`)

	boot() // a new server process: it knows no session
	_, err := call(t, p, "echo", `{"text":"two"}`)
	wantUnavailable(t, err)
	eventually(t, "a new session", func() bool {
		res, err := call(t, p, "echo", `{"text":"three"}`)
		return err == nil && res.Text == "three"
	})
	p.mu.Lock()
	n := p.starts
	p.mu.Unlock()
	if n != 2 {
		t.Errorf("sessions started = %d", n)
	}
}
