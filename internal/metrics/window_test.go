package metrics

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestQuantile(t *testing.T) {
	inf := math.Inf(+1)
	tests := []struct {
		name string
		q    float64
		bs   []bucket
		want float64 // NaN: no estimate
	}{
		{"no buckets", 0.5, nil, math.NaN()},
		{"empty", 0.5, []bucket{{0.1, 0}, {1, 0}, {inf, 0}}, math.NaN()},
		{"only +Inf", 0.5, []bucket{{inf, 4}}, math.NaN()},
		{"no +Inf bucket", 0.5, []bucket{{0.1, 2}, {1, 4}}, math.NaN()},
		{"q out of range", 1.5, []bucket{{0.1, 2}, {inf, 2}}, math.NaN()},
		// Everything in one bucket: interpolated from its lower bound.
		{"one bucket, p50", 0.5, []bucket{{0.1, 0}, {0.2, 4}, {inf, 4}}, 0.15},
		{"one bucket, p95", 0.95, []bucket{{0.1, 0}, {0.2, 4}, {inf, 4}}, 0.1 + 0.1*0.95},
		// The first bucket interpolates from 0.
		{"first bucket", 0.5, []bucket{{0.2, 10}, {inf, 10}}, 0.1},
		// Rank 5 of 10 falls in (0.1, 0.5], which holds 8: 5-2 = 3 of them up to the rank.
		{"interpolation", 0.5, []bucket{{0.1, 2}, {0.5, 10}, {inf, 10}}, 0.1 + 0.4*3.0/8},
		// A rank in the +Inf bucket answers the highest finite bound.
		{"+Inf bucket", 0.95, []bucket{{0.1, 1}, {0.5, 2}, {inf, 10}}, 0.5},
		{"non-positive first bound", 0.1, []bucket{{-1, 5}, {1, 10}, {inf, 10}}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := quantile(tc.q, tc.bs)
			if math.IsNaN(tc.want) {
				if !math.IsNaN(got) {
					t.Fatalf("got %v, want NaN", got)
				}
				return
			}
			if math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// observe records one call as the middleware does, with a latency the test
// chooses (TestWindowRun goes through the middleware itself).
func observe(m *Metrics, prov string, ok bool, seconds float64) {
	outcome := "ok"
	if !ok {
		outcome = string(toolerr.BackendError)
	}
	m.calls.WithLabelValues(prov+"_t", prov, outcome, "default").Inc()
	m.latency.WithLabelValues(prov).Observe(seconds)
}

func TestWindowRing(t *testing.T) {
	m := New()
	w := NewWindow(m.Registry(), WindowOptions{Step: 10 * time.Second, Span: 30 * time.Second}) // 3 samples
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 10 * time.Second) }

	if a := w.Activity(); len(a.Providers) != 0 || a.StepSeconds != 10 || a.SpanSeconds != 30 {
		t.Fatalf("empty window: %+v", a)
	}
	// Step 1: gh 4 calls (1 failed) at 0.15 s; local 1 call at 2 ms.
	for range 3 {
		observe(m, "gh", true, 0.15)
	}
	observe(m, "gh", false, 0.15)
	observe(m, "local", true, 0.002)
	if err := w.Sample(at(1)); err != nil {
		t.Fatal(err)
	}
	// Step 2: nothing. Step 3: gh 2 calls at 3 s (only the new ones count).
	if err := w.Sample(at(2)); err != nil {
		t.Fatal(err)
	}
	observe(m, "gh", true, 3)
	observe(m, "gh", true, 3)
	if err := w.Sample(at(3)); err != nil {
		t.Fatal(err)
	}

	a := w.Activity()
	if len(a.Providers) != 2 || a.Providers[0].Provider != "gh" || a.Providers[1].Provider != "local" {
		t.Fatalf("providers: %+v", a.Providers)
	}
	gh := a.Providers[0].Points
	if len(gh) != 3 {
		t.Fatalf("gh points: %+v", gh)
	}
	if gh[0].Calls != 4 || gh[0].Errors != 1 || gh[0].P50 == nil || math.Abs(*gh[0].P50-(100+150*0.5)) > 1e-6 {
		// 4 observations in (0.1, 0.25]: p50 = 100 + 150 * 2/4 ms.
		t.Errorf("step 1: %+v p50 %v", gh[0], deref(gh[0].P50))
	}
	if gh[1].Calls != 0 || gh[1].P50 != nil || !gh[1].Time.Equal(at(2)) {
		t.Errorf("step 2: %+v", gh[1])
	}
	if gh[2].Calls != 2 || gh[2].Errors != 0 || deref(gh[2].P95) < 2500 || deref(gh[2].P95) > 5000 {
		t.Errorf("step 3: %+v p95 %v", gh[2], deref(gh[2].P95))
	}
	// The ring keeps 3 samples: a fourth pushes the first out, and local,
	// with no call left in the window, drops out of it.
	if err := w.Sample(at(4)); err != nil {
		t.Fatal(err)
	}
	a = w.Activity()
	if len(a.Providers) != 1 || len(a.Providers[0].Points) != 3 || !a.Providers[0].Points[0].Time.Equal(at(2)) {
		t.Fatalf("after the ring turned: %+v", a.Providers)
	}
	for i := 5; i < 50; i++ { // bounded whatever runs
		if err := w.Sample(at(i)); err != nil {
			t.Fatal(err)
		}
	}
	if a := w.Activity(); len(a.Providers) != 0 || len(w.samples) != 3 {
		t.Errorf("an idle window: %+v, %d samples", a, len(w.samples))
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Run samples at each tick of the channel it is given, through the real
// middleware (the counters the runtime keeps), and stops when it closes.
func TestWindowRun(t *testing.T) {
	m := New()
	w := NewWindow(m.Registry(), WindowOptions{})
	h := m.Middleware()(func(context.Context, *pipeline.Request) *pipeline.Response {
		return &pipeline.Response{Result: &provider.Result{Text: "ok"}}
	})
	ticks := make(chan time.Time)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(context.Background(), ticks) }()
	h(context.Background(), &pipeline.Request{Resolved: catalog.Tool{Canonical: "demo_greet", Provider: "demo"}})
	now := time.Now()
	ticks <- now
	ticks <- now.Add(DefaultWindowStep) // received: the first sample is done
	close(ticks)
	<-done
	a := w.Activity()
	if len(a.Providers) != 1 || a.Providers[0].Provider != "demo" || len(a.Providers[0].Points) != 2 {
		t.Fatalf("activity: %+v", a)
	}
	if p := a.Providers[0].Points; p[0].Calls != 1 || p[0].P50 == nil || p[1].Calls != 0 {
		t.Errorf("points: %+v", p)
	}
	// A cancelled context stops it too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Run(ctx, make(chan time.Time))
}

// TestWindowLive: the step in progress shows as a trailing partial point
// without changing the window; the next sample counts the same calls once.
func TestWindowLive(t *testing.T) {
	m := New()
	w := NewWindow(m.Registry(), WindowOptions{Step: 10 * time.Second, Span: 30 * time.Second})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if a := w.Live(t0); len(a.Providers) != 0 {
		t.Fatalf("no calls yet: %+v", a.Providers)
	}
	observe(m, "gh", true, 0.01)
	if err := w.Sample(t0.Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	observe(m, "gh", false, 0.01)
	observe(m, "gh", true, 0.01)

	a := w.Live(t0.Add(13 * time.Second))
	if len(a.Providers) != 1 {
		t.Fatalf("providers: %+v", a.Providers)
	}
	pts := a.Providers[0].Points
	if len(pts) != 2 || pts[0].Partial || pts[0].Calls != 1 || !pts[1].Partial || pts[1].Calls != 2 || pts[1].Errors != 1 {
		t.Fatalf("live points: %+v", pts)
	}
	if got := w.Activity().Providers[0].Points; len(got) != 1 {
		t.Fatalf("Live changed the window: %+v", got)
	}
	if err := w.Sample(t0.Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	pts = w.Activity().Providers[0].Points
	if len(pts) != 2 || pts[1].Calls != 2 || pts[1].Partial {
		t.Fatalf("after the step ended: %+v", pts)
	}
	// A provider idle in the step in progress gets a zero partial point.
	pts = w.Live(t0.Add(21 * time.Second)).Providers[0].Points
	if last := pts[len(pts)-1]; !last.Partial || last.Calls != 0 {
		t.Fatalf("idle live point: %+v", last)
	}
}
