package resultcache_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/resultcache"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var backend = providertest.New(catalog.ProviderInfo{ID: "weather"})

func tool(name string, readOnly bool) catalog.Tool {
	return catalog.Tool{Provider: "weather", Name: name, Canonical: "weather_" + name, ReadOnly: readOnly, Digest: "d1"}
}

func req(identity string, t catalog.Tool, args string) *pipeline.Request {
	return &pipeline.Request{Caller: policy.Caller{Identity: identity}, Tool: t.Canonical, Args: json.RawMessage(args), Resolved: t, Backend: backend}
}

// counting is the stage below the cache: it answers each call with a new
// text, or with the error result when fail is set.
type counting struct {
	n    int
	fail bool
}

func (c *counting) handler(_ context.Context, r *pipeline.Request) *pipeline.Response {
	c.n++
	res := &provider.Result{Text: fmt.Sprintf("answer %d for %s", c.n, r.Args)}
	if c.fail {
		res.IsError = true
		return &pipeline.Response{Result: res, Err: pipeline.BackendError(res)}
	}
	return &pipeline.Response{Result: res}
}

func TestCache(t *testing.T) {
	read, write := tool("forecast", true), tool("set_alert", false)
	confirmed := read
	confirmed.AlwaysConfirm = true
	changed := read
	changed.Digest = "d2"
	type step struct {
		r       *pipeline.Request
		advance time.Duration
		want    string // hit | miss | "" (not cached)
	}
	cases := []struct {
		name   string
		rule   resultcache.Rule
		fail   bool
		steps  []step
		reach  int // calls that reached the stage below
		before func(c *resultcache.Cache)
	}{
		{"hit", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", read, `{"city":"Oslo"}`), 0, "miss"}, {req("a", read, `{ "city" : "Oslo" }`), 0, "hit"}}, 1, nil},
		{"miss after ttl", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", read, `{}`), 0, "miss"}, {req("a", read, `{}`), 59 * time.Second, "hit"}, {req("a", read, `{}`), time.Second, "miss"}}, 2, nil},
		{"different args miss", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", read, `{"city":"Oslo"}`), 0, "miss"}, {req("a", read, `{"city":"Bergen"}`), 0, "miss"}}, 2, nil},
		{"different identity miss", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", read, `{}`), 0, "miss"}, {req("b", read, `{}`), 0, "miss"}, {req("", read, `{}`), 0, "miss"}}, 3, nil},
		{"shared across identities when perIdentity false", resultcache.Rule{TTL: time.Minute, PerIdentity: false},
			false, []step{{req("a", read, `{}`), 0, "miss"}, {req("b", read, `{}`), 0, "hit"}}, 1, nil},
		{"changed digest miss", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", read, `{}`), 0, "miss"}, {req("a", changed, `{}`), 0, "miss"}, {req("a", changed, `{}`), 0, "hit"}}, 2, nil},
		{"error results not cached", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			true, []step{{req("a", read, `{}`), 0, "miss"}, {req("a", read, `{}`), 0, "miss"}}, 2, nil},
		{"mutating tool never cached", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", write, `{}`), 0, ""}, {req("a", write, `{}`), 0, ""}}, 2, nil},
		{"always-confirm tool never cached", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", confirmed, `{}`), 0, ""}, {req("a", confirmed, `{}`), 0, ""}}, 2, nil},
		{"pin change drops the provider", resultcache.Rule{TTL: time.Minute, PerIdentity: true},
			false, []step{{req("a", read, `{}`), 0, "miss"}}, 2, func(c *resultcache.Cache) {
				c.Drop("weather")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: time.Unix(1e9, 0)}
			tc.rule.Tools = []string{"weather_*"}
			c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{tc.rule}, Now: clk.now})
			below := &counting{fail: tc.fail}
			h := c.Stage()(below.handler)
			var first string
			for i, s := range tc.steps {
				clk.add(s.advance)
				resp := h(context.Background(), s.r)
				if resp.Cache != s.want {
					t.Fatalf("step %d: cache = %q, want %q", i, resp.Cache, s.want)
				}
				if i == 0 && resp.Result != nil {
					first = resp.Result.Text
				}
				if s.want == "hit" && resp.Result.Text != first && tc.name == "hit" {
					t.Fatalf("hit answered %q, want %q", resp.Result.Text, first)
				}
			}
			if tc.before != nil { // the rest of the case: after a drop, the same call misses
				tc.before(c)
				if resp := h(context.Background(), tc.steps[0].r); resp.Cache != "miss" {
					t.Fatalf("after drop: cache = %q", resp.Cache)
				}
			}
			if below.n != tc.reach {
				t.Fatalf("%d calls reached the backend, want %d", below.n, tc.reach)
			}
		})
	}
}

func TestByteBoundEvictsOldest(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	// Each entry counts as about 96+64+~60 bytes: room for three.
	c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{"weather_*"}, TTL: time.Hour, PerIdentity: true}}, MaxBytes: 700, Now: clk.now})
	below := &counting{}
	h := c.Stage()(below.handler)
	read := tool("forecast", true)
	for i := range 4 {
		h(context.Background(), req("a", read, fmt.Sprintf(`{"n":%d}`, i)))
	}
	if n, b := c.Stats(); n != 3 || b > 700 {
		t.Fatalf("stats = %d entries, %d bytes", n, b)
	}
	if resp := h(context.Background(), req("a", read, `{"n":0}`)); resp.Cache != "miss" {
		t.Fatalf("oldest entry still served: %q", resp.Cache)
	}
	if resp := h(context.Background(), req("a", read, `{"n":3}`)); resp.Cache != "hit" {
		t.Fatalf("newest entry evicted: %q", resp.Cache)
	}
}

// A hit is a copy: changing it (the result guard redacts) changes nothing
// kept; content blocks and structured content come back as they were.
func TestHitIsAFreshCopy(t *testing.T) {
	c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{"weather_*"}, TTL: time.Hour, PerIdentity: true}}})
	h := c.Stage()(func(context.Context, *pipeline.Request) *pipeline.Response {
		return &pipeline.Response{Result: &provider.Result{Text: "sunny", Content: []sdk.Content{&sdk.TextContent{Text: "sunny"}}, Structured: map[string]any{"t": 21.5}}}
	})
	r := req("a", tool("forecast", true), `{}`)
	h(context.Background(), r)
	hit := h(context.Background(), r)
	if hit.Cache != "hit" || hit.Result.Text != "sunny" || len(hit.Result.Content) != 1 || hit.Result.Content[0].(*sdk.TextContent).Text != "sunny" ||
		hit.Result.Structured.(map[string]any)["t"] != json.Number("21.5") {
		t.Fatalf("hit = %+v", hit.Result)
	}
	hit.Result.Text = "[redacted]"
	hit.Result.Content[0].(*sdk.TextContent).Text = "[redacted]"
	if again := h(context.Background(), r); again.Result.Text != "sunny" || again.Result.Content[0].(*sdk.TextContent).Text != "sunny" {
		t.Fatalf("kept result changed: %+v", again.Result)
	}
}

func TestChangedDropsOnlyTheChangedProvider(t *testing.T) {
	c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{"*"}, TTL: time.Hour, PerIdentity: true}}})
	below := &counting{}
	h := c.Stage()(below.handler)
	w := tool("forecast", true)
	o := catalog.Tool{Provider: "other", Name: "x", Canonical: "other_x", ReadOnly: true, Digest: "o1"}
	c.Changed([]catalog.Tool{w, o})
	h(context.Background(), req("a", w, `{}`))
	h(context.Background(), req("a", o, `{}`))
	w2 := tool("alerts", true)
	c.Changed([]catalog.Tool{w, w2, o}) // weather listed a new tool (list_changed)
	if resp := h(context.Background(), req("a", w, `{}`)); resp.Cache != "miss" {
		t.Fatalf("weather after its change: %q", resp.Cache)
	}
	if resp := h(context.Background(), req("a", o, `{}`)); resp.Cache != "hit" {
		t.Fatalf("other provider dropped too: %q", resp.Cache)
	}
}

func TestRefused(t *testing.T) {
	var log bytes.Buffer
	c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{"weather_*"}, TTL: time.Hour}},
		Log: slogTo(&log)})
	got := c.Refused([]catalog.Tool{tool("forecast", true), tool("set_alert", false), {Provider: "x", Canonical: "x_y"}})
	if len(got) != 1 || got[0].Tool != "weather_set_alert" || got[0].Glob != "weather_*" {
		t.Fatalf("refused = %+v", got)
	}
	c.Refused([]catalog.Tool{tool("set_alert", false)})
	if n := strings.Count(log.String(), "not read-only"); n != 1 {
		t.Fatalf("logged %d times: %s", n, log.String())
	}
}

// With a shared store the results live there, under the rule's TTL.
func TestSharedStore(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	st := &state.Memory{Now: clk.now}
	rules := []resultcache.Rule{{Tools: []string{"weather_*"}, TTL: time.Minute, PerIdentity: true}}
	a := resultcache.New(resultcache.Options{Rules: rules, Store: st})
	b := resultcache.New(resultcache.Options{Rules: rules, Store: st}) // another replica
	below := &counting{}
	r := req("a", tool("forecast", true), `{}`)
	a.Stage()(below.handler)(context.Background(), r)
	if resp := b.Stage()(below.handler)(context.Background(), r); resp.Cache != "hit" {
		t.Fatalf("other replica: %q", resp.Cache)
	}
	if resp := b.Stage()(below.handler)(context.Background(), req("b", tool("forecast", true), `{}`)); resp.Cache != "miss" {
		t.Fatalf("other identity: %q", resp.Cache)
	}
	clk.add(time.Minute)
	if resp := a.Stage()(below.handler)(context.Background(), r); resp.Cache != "miss" {
		t.Fatalf("after ttl: %q", resp.Cache)
	}
}

// Through the real pipeline: the second identical call does not reach the
// provider and the audit says hit; another identity, or a changed
// definition, reaches it again.
func TestThroughPipeline(t *testing.T) {
	schema := `{"type":"object","properties":{"city":{"type":"string"}}}`
	fake := providertest.New(catalog.ProviderInfo{ID: "weather", RequireConfirm: true},
		providertest.Tool("forecast", "The forecast", schema, true),
		providertest.Tool("set_alert", "Set an alert", schema, false))
	fake.Func = func(_ context.Context, t catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: "sunny in " + string(args)}, nil
	}
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{"weather_*"}, TTL: time.Minute, PerIdentity: true}}})
	reg.OnChange(func() { c.Changed(reg.Tools("weather")) })
	var audit bytes.Buffer
	run := pipeline.New(pipeline.Options{Catalog: reg, AuditTo: &audit, ResultCache: c.Stage(),
		Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	call := func(identity, tool string, confirm bool) *pipeline.Response {
		return run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: identity}, Tool: tool,
			Args: json.RawMessage(`{"city":"Oslo"}`), Confirm: confirm})
	}
	lastAudit := func() pipeline.AuditRecord {
		lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
		var rec pipeline.AuditRecord
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if r := call("alice", "weather_forecast", false); r.Failed() || lastAudit().Cache != "miss" {
		t.Fatalf("first call: %+v %+v", r, lastAudit())
	}
	r := call("alice", "weather_forecast", false)
	if rec := lastAudit(); r.Failed() || rec.Cache != "hit" || rec.Outcome != "ok" || rec.Decision != "allowed" {
		t.Fatalf("second call: %+v, audit %+v", r, rec)
	}
	if r.Result.Text != `sunny in {"city":"Oslo"}` {
		t.Fatalf("hit = %q", r.Result.Text)
	}
	if n := len(fake.Calls()); n != 1 {
		t.Fatalf("provider reached %d times, want 1", n)
	}
	call("bob", "weather_forecast", false) // never crosses identities
	if n := len(fake.Calls()); n != 2 || lastAudit().Cache != "miss" {
		t.Fatalf("bob: provider reached %d times, cache %q", n, lastAudit().Cache)
	}
	// A changed definition (a list_changed, a pin change) is another tool.
	fake.SetTools(providertest.Tool("forecast", "The forecast, now hourly", schema, true),
		providertest.Tool("set_alert", "Set an alert", schema, false))
	reg.Refresh(context.Background())
	call("alice", "weather_forecast", false)
	if n := len(fake.Calls()); n != 3 || lastAudit().Cache != "miss" {
		t.Fatalf("after a definition change: provider reached %d times, cache %q", n, lastAudit().Cache)
	}
	// A mutating tool is never cached, even when a glob matches it, and a
	// hit never bypasses a decision: without confirm it is still refused.
	for range 2 {
		call("alice", "weather_set_alert", true)
	}
	if n := len(fake.Calls()); n != 5 || lastAudit().Cache != "" {
		t.Fatalf("mutating tool: provider reached %d times, cache %q", n, lastAudit().Cache)
	}
	if r := call("alice", "weather_set_alert", false); r.Err == nil || r.Err.Code != "CONFIRMATION_REQUIRED" {
		t.Fatalf("unconfirmed: %+v", r)
	}
	// A denied tool is denied on a would-be hit too.
	deny := pipeline.New(pipeline.Options{Catalog: reg, Rules: policy.Rules{Deny: []string{"weather_forecast"}}, ResultCache: c.Stage(),
		Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	if r := deny(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: "alice"}, Tool: "weather_forecast", Args: json.RawMessage(`{"city":"Oslo"}`)}); !r.Failed() || r.Cache != "" {
		t.Fatalf("denied call answered: %+v", r)
	}
}

// degraded is a shared store that reports it runs on its local fallback.
type degraded struct{ state.Store }

func (degraded) Status() state.Status { return state.Status{Backend: "memory", Degraded: true} }

// While the shared store is degraded, results stay in the byte-bounded LRU
// (never in the fallback's key-bounded memory).
func TestDegradedStoreUsesMemory(t *testing.T) {
	st := state.NewMemory()
	c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{"weather_*"}, TTL: time.Minute, PerIdentity: true}}, Store: degraded{st}})
	below := &counting{}
	h := c.Stage()(below.handler)
	r := req("a", tool("forecast", true), `{}`)
	h(context.Background(), r)
	if resp := h(context.Background(), r); resp.Cache != "hit" {
		t.Fatalf("cache = %q", resp.Cache)
	}
	if n, _ := c.Stats(); n != 1 {
		t.Fatalf("memory holds %d entries", n)
	}
	if kept, _ := st.Scan(context.Background(), ""); len(kept) != 0 {
		t.Fatalf("store holds %d entries", len(kept))
	}
}
