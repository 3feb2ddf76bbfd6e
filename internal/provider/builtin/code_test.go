package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// fakeHost answers like the facade's host: weather and geo are read-only,
// deploy mutates, secret is denied by policy (hidden from search and
// describe, DENIED when called), and every call is recorded.
type fakeHost struct {
	mu       sync.Mutex
	calls    []string
	confirms []any
	inflight atomic.Int32
	peak     atomic.Int32
	gate     chan struct{} // when set, calls wait on it
	entered  chan struct{} // when set, calls say they started
}

var hostTools = map[string]catalog.Tool{
	"weather_forecast": {Canonical: "weather_forecast", Description: "Forecast for a city.", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`)},
	"geo_lookup": {Canonical: "geo_lookup", Description: "Where a place is.", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"place":{"type":"string"}},"required":["place"]}`)},
	"ops_deploy": {Canonical: "ops_deploy", Description: "Deploy.", InputSchema: json.RawMessage(`{"type":"object"}`)},
}

func (h *fakeHost) Search(_ context.Context, q string, limit int) []catalog.Tool {
	var out []catalog.Tool
	for _, n := range []string{"geo_lookup", "weather_forecast", "ops_deploy"} {
		if strings.Contains(n, strings.Fields(q)[0]) && len(out) < limit {
			out = append(out, hostTools[n])
		}
	}
	return out
}

func (h *fakeHost) Describe(_ context.Context, name string) (catalog.Tool, bool) {
	t, ok := hostTools[name]
	return t, ok
}

func (h *fakeHost) Call(ctx context.Context, name string, args json.RawMessage, confirm any) (*provider.Result, error) {
	n := h.inflight.Add(1)
	defer h.inflight.Add(-1)
	for m := h.peak.Load(); n > m && !h.peak.CompareAndSwap(m, n); m = h.peak.Load() {
	}
	if h.entered != nil {
		h.entered <- struct{}{}
	}
	if h.gate != nil {
		<-h.gate
	}
	h.mu.Lock()
	h.calls = append(h.calls, name)
	h.confirms = append(h.confirms, confirm)
	h.mu.Unlock()
	switch name {
	case "weather_forecast":
		var a struct{ City string }
		_ = json.Unmarshal(args, &a)
		return &provider.Result{Text: `{"city":"` + a.City + `","temp":21}`}, nil
	case "geo_lookup":
		return &provider.Result{Text: `{"lat":48.1,"lon":11.6}`}, nil
	case "ops_deploy":
		if confirm == nil {
			return nil, toolerr.New(toolerr.ConfirmationRequired, "Repeat with the confirm token.", "ops_deploy changes state").
				With("confirm_token", "tok-1").With("correct_shape", map[string]any{"tool": "execute_javascript"})
		}
		return &provider.Result{Text: "deployed"}, nil
	case "secret_read":
		return nil, toolerr.New(toolerr.Denied, "This tool is denied by policy.", "%q is denied", name)
	case "broken":
		return &provider.Result{Text: "boom", IsError: true}, nil
	}
	return nil, toolerr.New(toolerr.UnknownTool, "Search first.", "no tool %q", name).With("correct_shape", map[string]any{"tool": "x"})
}

func runScript(t *testing.T, o Options, h *fakeHost, code string) *provider.Result {
	t.Helper()
	p := New(o)
	args, _ := json.Marshal(map[string]any{"code": code})
	res, err := p.CallValues(context.Background(), tool(t, p, JavaScriptTool), args, provider.Values{Script: h})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	return res
}

func TestScriptTools(t *testing.T) {
	tests := []struct {
		name, code string
		opts       CodeOptions
		want       string // substring of the result text
		isErr      bool
		calls      int
	}{
		{"search then two calls combined", `
			const [geo] = tools.search("geo");
			const w = tools.describe("weather_forecast");
			const [a, b] = await Promise.all([tools.call(geo.name, {place: "Munich"}), tools.call(w.name, {city: "Munich"})]);
			return {sig: w.signature, lat: a.lat, temp: b.temp, searched: geo.signature}`, CodeOptions{},
			`{"sig":"weather_forecast(args: {city: string, days?: number}): Promise<any>","lat":48.1,"temp":21,"searched":"geo_lookup(args: {place: string}): Promise<any>"}`, false, 2},
		{"denied throws with its code", `let e; try { await tools.call("secret_read", {}) } catch (x) { e = x }; return [e.code, e.message, e.tool]`, CodeOptions{},
			`["DENIED","tools.call(\"secret_read\") failed: DENIED: \"secret_read\" is denied","secret_read"]`, false, 1},
		{"unknown tool teaches its shape", `try { await tools.call("nope") } catch (e) { return [e.code, e.correct_shape.tool, e.hint] }`, CodeOptions{},
			`["UNKNOWN_TOOL","x","Search first."]`, false, 1},
		{"uncaught tool failure fails the run with its envelope", `await tools.call("broken")`, CodeOptions{}, `BACKEND_ERROR`, true, 1},
		{"tool-reported error", `try { await tools.call("broken") } catch (e) { return [e.code, e.envelope.error.output] }`, CodeOptions{},
			`["BACKEND_ERROR","boom"]`, false, 1},
		{"mutations on still need confirmation", `try { await tools.call("ops_deploy", {}) } catch (e) { return [e.code, e.confirm_token] }`, CodeOptions{AllowMutations: true},
			`["CONFIRMATION_REQUIRED","tok-1"]`, false, 1},
		{"confirm passes through", `await tools.call("ops_deploy", {}, {confirm: "tok-1"})`, CodeOptions{AllowMutations: true}, `deployed`, false, 1},
		{"budget", `let n = 0; try { for (;;) { await tools.call("geo_lookup", {place: "x"}); n++ } } catch (e) { return [n, e.code, e.message] }`, CodeOptions{MaxCalls: 3},
			`[3,"DENIED","the script exceeded its budget of 3 tool calls (call to \"geo_lookup\" refused)"]`, false, 3},
		{"budget with calls in flight", `const ps = []; let code; try { for (let i = 0; i < 5; i++) ps.push(tools.call("geo_lookup", {place: "p" + i})) } catch (e) { code = e.code }
			const r = await Promise.all(ps); return [r.length, code]`, CodeOptions{MaxCalls: 3}, `[3,"DENIED"]`, false, 3},
		{"describe unknown", `try { tools.describe("nope") } catch (e) { return e.code }`, CodeOptions{}, `UNKNOWN_TOOL`, false, 0},
		{"bad arguments", `try { tools.call("geo_lookup", 5) } catch (e) { return String(e) }`, CodeOptions{}, `TypeError: tools.call(name, args): args must be an object`, false, 0},
	}
	// Both runners: a child process per script (the server's), and in
	// process (the fallback); the script sees the same `tools`.
	for _, runner := range []jsrun.Runner{nil, jsrun.InProcess} {
		for _, tc := range tests {
			name := tc.name
			if runner != nil {
				name += " in process"
			}
			t.Run(name, func(t *testing.T) {
				h := &fakeHost{}
				res := runScript(t, Options{Code: tc.opts, Runner: runner}, h, tc.code)
				if res.IsError != tc.isErr || !strings.Contains(res.Text, tc.want) {
					t.Fatalf("isError=%v text=%s\nwant isError=%v with %s (details %v)", res.IsError, res.Text, tc.isErr, tc.want, res.Details)
				}
				if len(h.calls) != tc.calls {
					t.Fatalf("host saw %d calls %v, want %d", len(h.calls), h.calls, tc.calls)
				}
				if tc.isErr {
					te, _ := res.Details["tool_error"].(map[string]any)
					if fmt.Sprint(te["code"]) != "BACKEND_ERROR" || res.Details["tool"] != "broken" {
						t.Fatalf("details %v", res.Details)
					}
				}
			})
		}
	}
}

// A refusal the script does not catch is the run's answer in its own code
// and words (DENIED here), not a BACKEND_ERROR "the tool ran and reported a
// failure".
func TestUncaughtRefusalKeepsItsCode(t *testing.T) {
	p := New(Options{})
	args, _ := json.Marshal(map[string]any{"code": `await tools.call("secret_read")`})
	_, err := p.CallValues(context.Background(), tool(t, p, JavaScriptTool), args, provider.Values{Script: &fakeHost{}})
	te, ok := toolerr.As(err)
	if !ok || te.Code != toolerr.Denied || te.Details["tool"] != "secret_read" || !strings.Contains(te.Message, "did not catch") {
		t.Fatalf("err = %v, want DENIED for secret_read", err)
	}
}

// Promise.all starts every call, but no more than Concurrency run at once.
func TestScriptToolsConcurrency(t *testing.T) {
	h := &fakeHost{gate: make(chan struct{}), entered: make(chan struct{})}
	done := make(chan *provider.Result)
	go func() {
		done <- runScript(t, Options{Code: CodeOptions{Concurrency: 2}}, h,
			`const r = await Promise.all([1,2,3,4,5,6].map(i => tools.call("geo_lookup", {place: "p" + i}))); r.length`)
	}()
	<-h.entered
	<-h.entered // two calls run at once
	for range 4 {
		h.gate <- struct{}{} // one finishes, the next may start
		<-h.entered
	}
	h.gate <- struct{}{}
	h.gate <- struct{}{}
	res := <-done
	if res.IsError || res.Text == "" || !strings.Contains(res.Text, "6") {
		t.Fatalf("result %s", res.Text)
	}
	if p := h.peak.Load(); p != 2 {
		t.Fatalf("peak concurrency %d, want 2", p)
	}
}

// Without a host (a direct provider call), scripts have no tools.
func TestScriptWithoutHost(t *testing.T) {
	p := New(Options{})
	res, err := p.Call(context.Background(), tool(t, p, JavaScriptTool), json.RawMessage(`{"code":"typeof tools"}`))
	if err != nil || !strings.Contains(res.Text, `"undefined"`) {
		t.Fatalf("%v %v", res, err)
	}
}

// A script that tries to exhaust the server through its tools or its own
// memory fails alone, with the cause in words, and the next script runs.
func TestScriptHostile(t *testing.T) {
	if ok, why := jsrun.Isolation(); !ok {
		t.Skip(why)
	}
	if raceEnabled {
		t.Skip("the race detector multiplies the bombs' time and memory; the bounds are checked without it")
	}
	o := Options{Code: CodeOptions{Memory: 64 << 20, CPU: 2 * time.Second, Timeout: 5 * time.Second}}
	start := time.Now()
	big := o
	big.Code.Memory = 192 << 20
	res := runScript(t, big, &fakeHost{}, `const q = "x".repeat(12 << 20) + "y".repeat(12 << 20); try { tools.search(q) } catch (e) { return String(e) }`)
	if res.IsError || !strings.Contains(res.Text, "TypeError: tools.search(query, {limit}): the query has 25165824 characters; describe the capability in at most 2000") {
		t.Fatalf("24 MB query: %s", res.Text)
	}
	if took := time.Since(start); took > o.Code.Timeout+time.Second {
		t.Fatalf("24 MB query took %s", took)
	}
	res = runScript(t, o, &fakeHost{}, `const s = "x".repeat(1<<24); return new Array(1<<22).join(s).length`)
	je, _ := res.Details["js_error"].(map[string]any)
	if !res.IsError || je["kind"] != jsrun.KindMemory || res.Text != "the script used more than 64 MiB" {
		t.Fatalf("join bomb: %+v", res)
	}
	// A loop runs into its CPU limit or, on a loaded machine, its deadline.
	res, err := runScriptErr(o, &fakeHost{}, `for (;;) {}`, 0)
	if te, ok := toolerr.As(err); ok && te.Code == toolerr.Timeout {
		t.Logf("busy loop: %v", te)
	} else if err != nil || !res.IsError || res.Text != "the script used more than 2s of CPU" {
		t.Fatalf("busy loop: %v %+v", err, res)
	}
	res = runScript(t, o, &fakeHost{}, `const r = await tools.call("weather_forecast", {city: "Rome"}); return r.temp`)
	if res.IsError || !strings.Contains(res.Text, `"result":21`) {
		t.Fatalf("after the bombs: %s", res.Text)
	}
}

func runScriptErr(o Options, h *fakeHost, code string, timeoutMS int) (*provider.Result, error) {
	p := New(o)
	a := map[string]any{"code": code}
	if timeoutMS > 0 {
		a["timeout_ms"] = timeoutMS
	}
	args, _ := json.Marshal(a)
	return p.CallValues(context.Background(), p.tools[0], args, provider.Values{Script: h})
}

// BenchmarkScriptTwoCalls: a script that makes two tool calls, in process
// (the fallback) and isolated (a child process from the pool), side by
// side. p50-ms and p90-ms are per-script wall times (docs/measured.md).
// "isolated" waits, off the clock, until the pool is warm before each
// script (the server's steady state); "isolated-back-to-back" does not, so
// each script competes with the start of the child that replaces the last.
//
//	go test -run '^$' -bench ScriptTwoCalls -benchtime 300x ./internal/provider/builtin/
func BenchmarkScriptTwoCalls(b *testing.B) {
	const code = `const a = await tools.call("geo_lookup", {place: "Munich"}); const w = await tools.call("weather_forecast", {city: "Munich"}); return [a.lat, w.temp]`
	args, _ := json.Marshal(map[string]any{"code": code})
	for _, bc := range []struct {
		name   string
		runner jsrun.Runner
		warm   bool
	}{{"in-process", jsrun.InProcess, false}, {"isolated", nil, true}, {"isolated-back-to-back", nil, false}} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.runner == nil {
				if ok, why := jsrun.Isolation(); !ok {
					b.Skip(why)
				}
			}
			p := New(Options{Runner: bc.runner})
			ctx, host := context.Background(), provider.Values{Script: &fakeHost{}}
			run := func() time.Duration {
				start := time.Now()
				res, err := p.CallValues(ctx, p.tools[0], args, host)
				if err != nil || res.IsError || !strings.Contains(res.Text, `"result":[48.1,21]`) {
					b.Fatalf("%v %+v", err, res)
				}
				return time.Since(start)
			}
			run() // the pool starts on first use
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				if bc.warm {
					b.StopTimer()
					if err := jsrun.Warm(context.Background()); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				took = append(took, run())
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}

// The warm-up a script's process makes before its script (warmUpScript)
// runs clean: a failure there would leave its code paths cold, silently.
func TestScriptWarmUp(t *testing.T) {
	out, err := jsrun.InProcess.Run(context.Background(), jsrun.Script{Kind: scriptKind, Code: warmUpScript,
		Config: mustJSON(scriptConfig{MaxCalls: 2}), Limits: jsrun.Limits{Timeout: 5 * time.Second}}, warmUpHost)
	if err != nil || string(out.Result) != `[{"ok":true,"code":"DENIED"},"warm_tool(args: {q: string}): Promise<any>"]` {
		t.Fatalf("%v %v", out, err)
	}
}

// The server keeps the budget whatever the script's process sends: a child
// that calls past it (skipping its own count) is refused without the host
// being reached, asking for the budget's refusal costs no call, and the
// errors the server keeps for a looping script are bounded.
func TestScriptServerKeepsTheBudget(t *testing.T) {
	h := &fakeHost{}
	srv := newScriptServer(h, CodeOptions{MaxCalls: 2}.withDefaults())
	serve := srv.serve()
	ask := func(method string, params any) hostAnswer {
		t.Helper()
		b, _ := json.Marshal(params)
		out, err := serve(context.Background(), method, b)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var a hostAnswer
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := ask(hostBudget, nameParams{Name: "geo_lookup"}); a.Error == nil || !a.Budget || a.Error.Code != toolerr.Denied {
		t.Fatalf("budget refusal: %+v", a)
	}
	for i := range 5 {
		a := ask(hostCall, callParams{Name: "geo_lookup", Args: json.RawMessage(`{"place":"x"}`)})
		if refused := a.Error != nil && a.Budget; refused != (i >= 2) {
			t.Fatalf("call %d: %+v", i+1, a)
		}
	}
	if len(h.calls) != 2 {
		t.Fatalf("the host saw %d calls, want 2", len(h.calls))
	}
	for range maxIssued + 10 {
		ask(hostBudget, nameParams{Name: "geo_lookup"})
	}
	if a := ask(hostBudget, nameParams{Name: "geo_lookup"}); a.Ref != 0 || len(srv.issued) != maxIssued {
		t.Fatalf("issued %d errors, answer ref %d", len(srv.issued), a.Ref)
	}
}
