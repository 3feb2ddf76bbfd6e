package metrics

// The console's activity charts: the last minutes of per-provider calls,
// errors and latency quantiles, drawn from the metrics the runtime already
// keeps rather than from a second set of counters. A Window gathers the
// Prometheus registry every step (agent_tools_tool_calls_total and
// agent_tools_tool_call_duration_seconds) and keeps, in a ring, each
// step's per-provider deltas; p50 and p95 are estimated from the deltas of
// the histogram's buckets the way Prometheus' histogram_quantile does, so
// the console shows what a dashboard over /metrics would.

import (
	"context"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Window defaults: a point every 10 s, 15 minutes kept (90 points).
const (
	DefaultWindowStep = 10 * time.Second
	DefaultWindowSpan = 15 * time.Minute
)

const (
	callsName   = Namespace + "_tool_calls_total"
	latencyName = Namespace + "_tool_call_duration_seconds"
)

// WindowOptions size a Window (zero fields take the defaults).
type WindowOptions struct {
	// Step is the time between samples; the caller's ticks should match it
	// (it is reported to the console, which labels its axis with it).
	Step time.Duration
	// Span is how much history is kept: Span/Step samples.
	Span time.Duration
}

// Window keeps the last Span of per-provider activity. It is safe for
// concurrent use: Sample (or Run) writes, Activity reads.
type Window struct {
	g    prometheus.Gatherer
	step time.Duration
	size int

	mu      sync.Mutex
	prev    map[string]cumulative // totals at the last sample, by provider
	samples []sample              // oldest first, at most size
}

// cumulative are one provider's totals since the process started.
type cumulative struct {
	calls, errors float64
	buckets       []bucket // cumulative counts; the last one is +Inf
}

type sample struct {
	at time.Time
	by map[string]Point
}

// Point is one provider's activity during one step.
type Point struct {
	// Time is the end of the step.
	Time   time.Time `json:"t"`
	Calls  int64     `json:"calls"`
	Errors int64     `json:"errors"` // outcome other than ok
	// P50 and P95 are latency estimates in milliseconds; nil without calls.
	P50 *float64 `json:"p50Ms"`
	P95 *float64 `json:"p95Ms"`
	// Partial marks the step still in progress (Live): it covers less than
	// a whole step.
	Partial bool `json:"partial,omitempty"`
}

// Series is one provider's points, one per step of the window, oldest first.
type Series struct {
	Provider string  `json:"provider"`
	Points   []Point `json:"points"`
}

// Activity is what the console's Activity page draws.
type Activity struct {
	StepSeconds float64 `json:"stepSeconds"`
	SpanSeconds float64 `json:"spanSeconds"`
	// Providers are those with at least one call in the window, by id.
	Providers []Series `json:"providers"`
}

// NewWindow returns a window over g (the runtime's Metrics.Registry()).
// It samples nothing by itself: drive it with Run (or Sample).
func NewWindow(g prometheus.Gatherer, o WindowOptions) *Window {
	if o.Step <= 0 {
		o.Step = DefaultWindowStep
	}
	if o.Span < o.Step {
		o.Span = max(DefaultWindowSpan, o.Step)
	}
	return &Window{g: g, step: o.Step, size: int(o.Span / o.Step), prev: map[string]cumulative{}}
}

// Run samples at every tick until ctx ends or ticks is closed. Production
// passes a time.Ticker's channel; tests their own, so no test sleeps.
func (w *Window) Run(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case now, ok := <-ticks:
			if !ok {
				return
			}
			_ = w.Sample(now) // a partial gather still samples what it got
		}
	}
}

// Sample gathers the registry and appends one point per provider: the
// change since the previous sample (since zero for the first one: the
// window is made with the metrics, before any call).
func (w *Window) Sample(now time.Time) error {
	w.mu.Lock() // gathering under the lock too: two samples never interleave their deltas
	defer w.mu.Unlock()
	mfs, err := w.g.Gather()
	cur := totals(mfs)
	w.samples = append(w.samples, w.since(cur, now, false))
	w.prev = cur
	if n := len(w.samples) - w.size; n > 0 {
		w.samples = slices.Delete(w.samples, 0, n)
	}
	return err
}

// since is the step from the last sample to now, given the totals now.
func (w *Window) since(cur map[string]cumulative, now time.Time, partial bool) sample {
	s := sample{at: now, by: map[string]Point{}}
	for id, c := range cur {
		p := w.prev[id]
		if c.calls < p.calls || c.count() < p.count() {
			p = cumulative{} // a reset (a new registry): count from zero
		}
		pt := Point{Time: now, Calls: int64(math.Round(c.calls - p.calls)), Errors: int64(math.Round(c.errors - p.errors)), Partial: partial}
		d := delta(c.buckets, p.buckets)
		pt.P50, pt.P95 = ms(quantile(0.5, d)), ms(quantile(0.95, d))
		if pt.Calls > 0 || pt.P50 != nil {
			s.by[id] = pt
		}
	}
	return s
}

// Activity returns the window: for every provider with a call in it, one
// point per sample (zero when it had none then).
func (w *Window) Activity() Activity {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.activityLocked(nil)
}

// Live is Activity plus the step in progress: one more point per provider,
// from the last sample to now, marked Partial. A call shows on the chart at
// the page's next refresh instead of when its step ends; the window itself
// is unchanged.
func (w *Window) Live(now time.Time) Activity {
	w.mu.Lock()
	defer w.mu.Unlock()
	mfs, _ := w.g.Gather() // a partial gather still shows what it got
	cur := w.since(totals(mfs), now, true)
	return w.activityLocked(&cur)
}

func (w *Window) activityLocked(live *sample) Activity {
	out := Activity{StepSeconds: w.step.Seconds(), SpanSeconds: (time.Duration(w.size) * w.step).Seconds(), Providers: []Series{}}
	samples := w.samples
	if live != nil {
		samples = append(slices.Clip(samples), *live)
	}
	seen := map[string]bool{}
	for _, s := range samples {
		for id := range s.by {
			seen[id] = true
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		ser := Series{Provider: id, Points: make([]Point, 0, len(samples))}
		for i, s := range samples {
			pt, ok := s.by[id]
			if !ok {
				pt = Point{Time: s.at, Partial: live != nil && i == len(samples)-1}
			}
			ser.Points = append(ser.Points, pt)
		}
		out.Providers = append(out.Providers, ser)
	}
	return out
}

func (c cumulative) count() float64 {
	if len(c.buckets) == 0 {
		return 0
	}
	return c.buckets[len(c.buckets)-1].count
}

// totals reads the two families into per-provider totals.
func totals(mfs []*dto.MetricFamily) map[string]cumulative {
	out := map[string]cumulative{}
	for _, mf := range mfs {
		switch mf.GetName() {
		case callsName:
			for _, m := range mf.GetMetric() {
				id, outcome := label(m, "provider"), label(m, "outcome")
				c := out[id]
				v := m.GetCounter().GetValue()
				c.calls += v
				if outcome != "ok" {
					c.errors += v
				}
				out[id] = c
			}
		case latencyName:
			for _, m := range mf.GetMetric() {
				id := label(m, "provider")
				h := m.GetHistogram()
				bs := make([]bucket, 0, len(h.GetBucket())+1)
				for _, b := range h.GetBucket() {
					if !math.IsInf(b.GetUpperBound(), +1) {
						bs = append(bs, bucket{upper: b.GetUpperBound(), count: float64(b.GetCumulativeCount())})
					}
				}
				bs = append(bs, bucket{upper: math.Inf(+1), count: float64(h.GetSampleCount())})
				c := out[id]
				c.buckets = bs
				out[id] = c
			}
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// delta is cur minus prev, bucket by bucket (the layout never changes
// within a process; without prev, cur itself).
func delta(cur, prev []bucket) []bucket {
	if len(prev) != len(cur) {
		return cur
	}
	out := make([]bucket, len(cur))
	for i := range cur {
		out[i] = bucket{upper: cur[i].upper, count: cur[i].count - prev[i].count}
	}
	return out
}

// ms converts an estimate in seconds to milliseconds; nil for NaN (no data).
func ms(sec float64) *float64 {
	if math.IsNaN(sec) {
		return nil
	}
	v := sec * 1000
	return &v
}

// bucket is one histogram bucket: count observations at most upper
// (cumulative, as Prometheus exposes them).
type bucket struct {
	upper float64
	count float64
}

// quantile estimates the q-quantile of the observations in buckets as
// Prometheus' histogram_quantile does: find the bucket the rank falls in
// and interpolate linearly inside it (from 0 for the first bucket, when its
// bound is positive); a rank in the +Inf bucket answers the highest finite
// bound. NaN without observations, without a +Inf bucket, or with fewer
// than two buckets (nothing to interpolate).
func quantile(q float64, bs []bucket) float64 {
	if q < 0 || q > 1 || len(bs) < 2 || !math.IsInf(bs[len(bs)-1].upper, +1) {
		return math.NaN()
	}
	total := bs[len(bs)-1].count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].count >= rank })
	if b == len(bs)-1 {
		return bs[len(bs)-2].upper
	}
	if b == 0 && bs[0].upper <= 0 {
		return bs[0].upper
	}
	start, below := 0.0, 0.0
	if b > 0 {
		start, below = bs[b-1].upper, bs[b-1].count
	}
	end, in := bs[b].upper, bs[b].count-below
	if in <= 0 {
		return end
	}
	return start + (end-start)*((rank-below)/in)
}
