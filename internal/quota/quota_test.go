package quota

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// clock is a fake clock the local buckets and token windows read.
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

func per(n int64, d time.Duration) config.PerPeriod { return config.PerPeriod{N: n, Period: d} }

// ok is the stage's next: a result of size chars, counted in calls.
func ok(chars int, calls *int) pipeline.Handler {
	return func(context.Context, *pipeline.Request) *pipeline.Response {
		if calls != nil {
			*calls++
		}
		// " the" is one o200k_base token: chars/4 tokens, as the comments count.
		return &pipeline.Response{Result: &provider.Result{Text: strings.Repeat(" the", chars/4)}}
	}
}

func req(identity, tool string) *pipeline.Request {
	return &pipeline.Request{Caller: policy.Caller{Identity: identity}, Tool: tool, Resolved: catalog.Tool{Canonical: tool}}
}

// outcome is "ok" or the refusal's limit.
func outcome(t *testing.T, r *pipeline.Response) string {
	t.Helper()
	if r.Err == nil {
		return "ok"
	}
	if r.Quota == nil {
		t.Fatalf("an error without a quota: %v", r.Err)
	}
	if _, wait := r.Err.Details["retry_after_ms"]; !wait {
		t.Fatalf("no retry_after_ms: %v", r.Err.Body())
	}
	return r.Quota.Limit
}

type step struct {
	identity, tool string
	advance        time.Duration // before the call
	want           string        // ok | rate | concurrent | tokens
}

func TestQuotaTable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quotas []config.Quota
		chars  int // each result's size
		steps  []step
	}{
		{"burst then refill", []config.Quota{{Rate: per(60, time.Minute), Burst: 2}}, 0, []step{
			{"a", "t", 0, "ok"}, {"a", "t", 0, "ok"}, {"a", "t", 0, "rate"},
			{"a", "t", 500 * time.Millisecond, "rate"}, {"a", "t", 500 * time.Millisecond, "ok"}, {"a", "t", 0, "rate"},
		}},
		{"default burst is the rate's N", []config.Quota{{Rate: per(3, time.Hour)}}, 0, []step{
			{"a", "t", 0, "ok"}, {"a", "t", 0, "ok"}, {"a", "t", 0, "ok"}, {"a", "t", 0, "rate"},
			{"a", "t", 20 * time.Minute, "ok"},
		}},
		{"each identity its own bucket", []config.Quota{{Identities: []string{"token:*"}, Rate: per(1, time.Minute)}}, 0, []step{
			{"token:a", "t", 0, "ok"}, {"token:a", "t", 0, "rate"}, {"token:b", "t", 0, "ok"}, {"token:b", "t", 0, "rate"},
		}},
		{"identity not matched is unaffected", []config.Quota{{Identities: []string{"token:intern"}, Rate: per(1, time.Minute)}}, 0, []step{
			{"token:intern", "t", 0, "ok"}, {"token:intern", "t", 0, "rate"},
			{"token:ci", "t", 0, "ok"}, {"token:ci", "t", 0, "ok"}, {"", "t", 0, "ok"}, {"", "t", 0, "ok"},
		}},
		{"tools globs share one bucket, others pass", []config.Quota{{Tools: []string{"gh_*"}, Rate: per(2, time.Minute)}}, 0, []step{
			{"a", "gh_issues", 0, "ok"}, {"a", "gh_prs", 0, "ok"}, {"a", "gh_issues", 0, "rate"},
			{"a", "git_log", 0, "ok"}, {"a", "git_log", 0, "ok"}, {"a", "git_log", 0, "ok"},
		}},
		{"tokens window", []config.Quota{{Tokens: per(10, time.Hour)}}, 16, []step{ // 16 chars = 4 tokens
			{"a", "t", 0, "ok"}, {"a", "t", 0, "ok"}, {"a", "t", 0, "ok"}, // 12 ≥ 10 after the third
			{"a", "t", 0, "tokens"}, {"b", "t", 0, "ok"}, {"a", "t", time.Hour, "ok"},
		}},
		{"the first quota to refuse names itself", []config.Quota{{Tools: []string{"x_*"}, Rate: per(5, time.Minute)}, {Rate: per(1, time.Minute)}}, 0, []step{
			{"a", "x_a", 0, "ok"}, {"a", "x_a", 0, "rate"}, {"a", "y", 0, "rate"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			l := New(Options{Quotas: tc.quotas, Now: c.now})
			h := l.Stage()(ok(tc.chars, nil))
			for i, s := range tc.steps {
				c.add(s.advance)
				if got := outcome(t, h(context.Background(), req(s.identity, s.tool))); got != s.want {
					t.Fatalf("step %d (%+v): %s, want %s", i, s, got, s.want)
				}
			}
		})
	}
}

func TestQuotaRefusalShape(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := New(Options{Quotas: []config.Quota{{Identities: []string{"x"}, Rate: per(9, time.Hour)}, {Tools: []string{"gh_*"}, Rate: per(1, time.Minute)}}, Now: c.now})
	h := l.Stage()(ok(0, nil))
	h(context.Background(), req("a", "gh_x"))
	r := h(context.Background(), req("a", "gh_x"))
	e := r.Err
	if e == nil || e.Code != toolerr.RateLimited || r.Decision != "refused" {
		t.Fatalf("%+v", r)
	}
	if e.Details["limit"] != "rate" || e.Details["quota"] != 1 || e.Details["retry_after_ms"] != int64(60000) ||
		strings.Join(e.Details["tools"].([]string), ",") != "gh_*" || !strings.Contains(e.Hint, "Wait retry_after_ms, then repeat the same call") {
		t.Fatalf("%s", e.JSON())
	}
	if q := r.Quota; q.Limit != "rate" || q.Index != 1 || q.RetryAfterMS != 60000 || len(q.Tools) != 1 {
		t.Fatalf("%+v", r.Quota)
	}
	l = New(Options{Quotas: []config.Quota{{Tokens: per(1, 24*time.Hour)}}, Now: c.now})
	h = l.Stage()(ok(4, nil))
	c.add(6 * time.Hour)
	h(context.Background(), req("a", "t"))
	r = h(context.Background(), req("a", "t"))
	if r.Err == nil || r.Err.Code != toolerr.QuotaExceeded || r.Quota.Limit != "tokens" || r.Quota.RetryAfterMS != (18*time.Hour).Milliseconds() || r.Quota.EstTokensUsed != 1 {
		t.Fatalf("%+v %+v", r.Err, r.Quota)
	}
}

// TestQuotaConcurrent: calls in flight take a slot each; a refused call
// frees the slots it took; every slot is given back when the call ends.
func TestQuotaConcurrent(t *testing.T) {
	l := New(Options{Quotas: []config.Quota{{Concurrent: 2}, {Tools: []string{"slow"}, Concurrent: 1}}})
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	h := l.Stage()(func(ctx context.Context, r *pipeline.Request) *pipeline.Response {
		if r.Tool == "slow" || r.Tool == "slow2" {
			started <- struct{}{}
			<-release
		}
		return &pipeline.Response{Result: &provider.Result{}}
	})
	var wg sync.WaitGroup
	for _, tool := range []string{"slow", "slow2"} {
		wg.Add(1)
		go func() { defer wg.Done(); h(context.Background(), req("a", tool)) }()
		<-started
	}
	if got := outcome(t, h(context.Background(), req("a", "fast"))); got != "concurrent" {
		t.Fatalf("third in flight: %s", got)
	}
	if got := outcome(t, h(context.Background(), req("b", "fast"))); got != "ok" {
		t.Fatalf("another identity: %s", got)
	}
	close(release)
	wg.Wait()
	for range 3 {
		if got := outcome(t, h(context.Background(), req("a", "fast"))); got != "ok" {
			t.Fatalf("after the calls ended: %s", got)
		}
	}
	l.local.mu.Lock()
	defer l.local.mu.Unlock()
	if len(l.local.inFlight) != 0 {
		t.Fatalf("slots left taken: %v", l.local.inFlight)
	}
}

// TestQuotaScriptCallsCountNoTokens: a script's own tool calls are
// limited, but their results reach the model through the script's, so
// their tokens are not counted twice.
func TestQuotaScriptCallsCountNoTokens(t *testing.T) {
	l := New(Options{Quotas: []config.Quota{{Tokens: per(5, time.Hour), Rate: per(100, time.Second)}}})
	h := l.Stage()(ok(400, nil))
	inner := req("a", "t")
	inner.Run, inner.Parent = "r1", "r1"
	for range 3 {
		if got := outcome(t, h(context.Background(), inner)); got != "ok" {
			t.Fatal(got)
		}
	}
	skill := req("a", "t")
	skill.Via = "skill:p:s"
	for range 3 {
		if got := outcome(t, h(context.Background(), skill)); got != "ok" {
			t.Fatal(got)
		}
	}
	h(context.Background(), req("a", "t"))
	if got := outcome(t, h(context.Background(), inner)); got != "tokens" {
		t.Fatalf("a script's call once the window is used: %s", got)
	}
}

func TestQuotaForwardedRequestsPass(t *testing.T) {
	l := New(Options{Quotas: []config.Quota{{Rate: per(1, time.Hour)}}})
	calls := 0
	h := l.Stage()(ok(0, &calls))
	for range 3 {
		r := req("a", "res")
		r.Op = true
		h(context.Background(), r)
	}
	if calls != 3 {
		t.Fatalf("calls %d", calls)
	}
}

// TestPipelineEleventhCall: through the real pipeline, a burst-10 quota
// lets ten calls through and answers the eleventh RATE_LIMITED with
// retry_after_ms; the loop guard does not count it, and the audit and the
// refusal name the limit.
func TestPipelineEleventhCall(t *testing.T) {
	fake := providertest.New(catalog.ProviderInfo{ID: "gh"}, providertest.Tool("issues", "Issues", "", true))
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	var audit bytes.Buffer
	l := New(Options{Quotas: []config.Quota{{Identities: []string{"token:intern"}, Tools: []string{"gh_*"}, Rate: per(30, time.Minute), Burst: 10}}})
	run := pipeline.New(pipeline.Options{Catalog: reg, AuditTo: &audit, Quota: l.Stage()})
	call := func(identity string) *pipeline.Response {
		return run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: identity, Session: "s"}, Tool: "gh_issues", Args: json.RawMessage(`{}`)})
	}
	for i := range 10 {
		if r := call("token:intern"); r.Failed() {
			t.Fatalf("call %d: %v", i+1, r.Err)
		}
	}
	for i := range 8 { // beyond the loop guard's refusal threshold: never REPEATED_FAILURE
		r := call("token:intern")
		if r.Err == nil || r.Err.Code != toolerr.RateLimited {
			t.Fatalf("call %d: %+v", 11+i, r)
		}
		ms, _ := r.Err.Details["retry_after_ms"].(int64)
		if ms <= 0 || ms > 2000 {
			t.Fatalf("retry_after_ms %v", r.Err.Details["retry_after_ms"])
		}
	}
	if r := call("token:ci"); r.Failed() {
		t.Fatalf("another identity: %v", r.Err)
	}
	if n := len(fake.Calls()); n != 11 {
		t.Fatalf("backend calls %d, want 11", n)
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if l := lines[10]; !strings.Contains(l, `"decision":"refused"`) || !strings.Contains(l, `"error_code":"RATE_LIMITED"`) ||
		!strings.Contains(l, `"quota":{"limit":"rate","index":0,"tools":["gh_*"],"retry_after_ms":`) {
		t.Fatalf("audit line %s", l)
	}
}
