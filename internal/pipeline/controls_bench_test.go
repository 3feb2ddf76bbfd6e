package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/quota"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/resultcache"
	"github.com/agent-tools/agent-tools/internal/resultguard"
	"github.com/agent-tools/agent-tools/internal/tokens"
)

// echoSvc is an in-memory provider that answers with the arguments it got
// (as the echo upstream of bench/overhead does) and keeps nothing: the
// fake provider records every call, which would grow with b.N.
type echoSvc struct{}

var _ provider.Provider = echoSvc{}

func (echoSvc) Info() catalog.ProviderInfo { return catalog.ProviderInfo{ID: "svc"} }
func (echoSvc) Tools(context.Context) ([]catalog.Tool, error) {
	return []catalog.Tool{{Provider: "svc", Name: "read", Description: "Read things", InputSchema: json.RawMessage(schema), ReadOnly: true}}, nil
}
func (echoSvc) Call(_ context.Context, _ catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	return &provider.Result{Text: string(args)}, nil
}

// controls says which of issue 48's team-control stages a pipeline has,
// each configured as internal/app builds it (app/quotas.go, results.go,
// cache.go) but never triggered by the benchmark's calls.
type controls struct {
	name  string
	quota bool // a quota whose globs match svc_read, limits never reached
	guard bool // security.results.scan: warn, spotlight off; the results are clean
	// cache: "" none; "idle" a rule that matches no tool; "miss" a rule
	// that matches svc_read, every call's arguments new (always a miss:
	// a lookup, the backend, the result kept).
	cache string
}

func controlsPipeline(b *testing.B, c controls, audit *bytes.Buffer) pipeline.Handler {
	reg := registry.New(nil)
	if err := reg.Add(echoSvc{}); err != nil {
		b.Fatal(err)
	}
	reg.Refresh(context.Background())
	o := pipeline.Options{Catalog: reg, Rules: policy.Rules{Deny: []string{"*_delete_*"}}, AuditTo: audit,
		Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}}
	if c.quota {
		// As quotaStage: quota.New(...).Stage(), process-local counts. Every
		// limit set (rate, calls in flight, result tokens), none reached.
		q := config.Quota{Identities: []string{"token:*"}, Tools: []string{"svc_*"},
			Rate: config.PerPeriod{N: 1_000_000_000, Period: time.Second}, Burst: 100, Concurrent: 64,
			Tokens: config.PerPeriod{N: 1 << 60, Period: 24 * time.Hour}}
		o.Quota = quota.New(quota.Options{Quotas: []config.Quota{q}, Local: quota.NewLocal()}).Stage()
	}
	if c.guard {
		// As resultGuard: the mode of security.results.scan (warn is the default).
		o.ResultGuard = resultguard.New(resultguard.Options{Mode: resultguard.Warn}).Stage()
	}
	if c.cache != "" {
		// As resultCache: the rules, in memory (no server.redis).
		glob := "nothing_*"
		if c.cache == "miss" {
			glob = "svc_*"
		}
		rc := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{glob}, TTL: time.Hour, PerIdentity: true}}})
		reg.OnChange(func() { rc.Changed(reg.Tools("svc")) })
		rc.Changed(reg.Tools("svc"))
		o.ResultCache = rc.Stage()
	}
	return pipeline.New(o)
}

var controlSets = []controls{
	{name: "off"},
	{name: "quota", quota: true},
	{name: "guard", guard: true},
	{name: "cache-idle", cache: "idle"},
	{name: "cache-miss", cache: "miss"},
	{name: "all-idle", quota: true, guard: true, cache: "idle"},
	{name: "all-miss", quota: true, guard: true, cache: "miss"},
}

// controlArgs are call i's arguments: new on every call (so that a
// matching cache rule always misses), the same for every pipeline.
func controlArgs(i int) json.RawMessage {
	buf := append(make([]byte, 0, 32), `{"n":`...)
	buf = strconv.AppendInt(buf, int64(i), 10)
	buf = append(buf, `,"token":"abc"}`...)
	return json.RawMessage(buf)
}

func controlCall(b *testing.B, run pipeline.Handler, args json.RawMessage, wantCache string) *pipeline.Response {
	resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: "token:alice", Session: "s"}, Via: "call_tool", Tool: "svc_read", Args: args})
	if resp.Failed() || resp.Cache != wantCache || len(resp.ResultFindings) > 0 {
		b.Fatalf("resp = %+v (cache %q, findings %v)", resp.Err, resp.Cache, resp.ResultFindings)
	}
	return resp
}

// BenchmarkTeamControls measures issue 48's team controls on but not
// triggered, against the pipeline without them (the "off" row): quotas
// (matching, limits never reached), the result guard (warn, clean
// results), the result cache (a rule that matches no tool: "cache-idle";
// a rule that matches, each call missing: "cache-miss"), each alone and
// all together ("all-idle", "all-miss"). Every pipeline writes its audit
// line to a buffer, as BenchmarkPipelineOverhead. All pipelines are called
// in one loop, call by call, the order rotating every iteration, so that
// they see the same machine; it reports each one's mean and p50 per call
// and its ratio to "off" (<name>/off: means; <name>/off-p50: p50s).
//
// The fourth control, token accounting (the audit line's result_tokens,
// o200k_base), has no switch: the audit stage counts on every call, in
// every pipeline here. Its cost is timed on its own, on the "off" call's
// response (tokens-ns/call), and "none" is "off" less that time: the
// pipeline before issue 48 (off/none, all-idle/none, all-miss/none).
func BenchmarkTeamControls(b *testing.B) {
	runs := make([]pipeline.Handler, len(controlSets))
	audits := make([]bytes.Buffer, len(controlSets))
	want := make([]string, len(controlSets))
	for i, c := range controlSets {
		runs[i] = controlsPipeline(b, c, &audits[i])
		if c.cache == "miss" {
			want[i] = resultcache.Miss
		}
	}
	tokens.Load() // as serve's tokens.Warm at start: every call counted exactly
	var tokT time.Duration
	lat := make([][]time.Duration, len(controlSets))
	sum := make([]time.Duration, len(controlSets))
	n := 0
	for b.Loop() {
		args := controlArgs(n)
		for k := range runs {
			j := (k + n) % len(runs)
			audits[j].Reset()
			t0 := time.Now()
			resp := controlCall(b, runs[j], args, want[j])
			d := time.Since(t0)
			if j == 0 { // the fourth control, token accounting, is in every pipeline's audit: its cost alone
				t1 := time.Now()
				if _, est := tokens.Count(pipeline.ModelText(resp)); est {
					b.Fatal("token count estimated")
				}
				tokT += time.Since(t1)
			}
			sum[j] += d
			lat[j] = append(lat[j], d)
		}
		n++
	}
	p50 := func(j int) float64 {
		s := slices.Clone(lat[j])
		slices.Sort(s)
		return float64(s[len(s)/2])
	}
	off, offP50 := float64(sum[0]), p50(0)
	b.ReportMetric(off/float64(n), "off-ns/call")
	// Token accounting (the audit's result_tokens, o200k_base) is in
	// every pipeline here, "off" included; "none" is "off" without it,
	// and all-idle/none is the four controls on, not triggered.
	b.ReportMetric(float64(tokT)/float64(n), "tokens-ns/call")
	b.ReportMetric(off/float64(off-float64(tokT)), "off/none")
	b.ReportMetric(float64(sum[5])/(off-float64(tokT)), "all-idle/none")
	b.ReportMetric(float64(sum[6])/(off-float64(tokT)), "all-miss/none")
	for j, c := range controlSets[1:] {
		j++
		b.ReportMetric(float64(sum[j])/float64(n), c.name+"-ns/call")
		b.ReportMetric(float64(sum[j])/off, c.name+"/off")
		b.ReportMetric(p50(j)/offP50, c.name+"/off-p50")
	}
}

// BenchmarkTeamControlsAllocs is each pipeline alone, for allocations.
func BenchmarkTeamControlsAllocs(b *testing.B) {
	tokens.Load()
	for _, c := range controlSets {
		b.Run(c.name, func(b *testing.B) {
			var audit bytes.Buffer
			run := controlsPipeline(b, c, &audit)
			want := ""
			if c.cache == "miss" {
				want = resultcache.Miss
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				audit.Reset()
				args := controlArgs(i)
				controlCall(b, run, args, want)
			}
		})
	}
}
