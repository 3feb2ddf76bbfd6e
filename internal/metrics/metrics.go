// Package metrics exposes the runtime's Prometheus metrics: tool calls by
// tool, provider and outcome, call latency, result tokens, confirmations asked, loop-guard
// trips (from a pipeline middleware), MCP sessions and provider health (read
// at scrape time), and HTTP requests (counted by the transport).
//
// Label values are bounded: the tool label is the resolved canonical name or
// "unresolved" (a name the client made up never becomes a label), the
// provider label a registered provider id or "unknown".
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Namespace prefixes every metric name.
const Namespace = "agent_tools"

// ProviderHealth is one provider's state at scrape time.
type ProviderHealth struct {
	ID    string
	Kind  string
	Up    bool // enabled and its last listing succeeded
	Tools int
}

// Metrics owns a Prometheus registry with the runtime's collectors.
type Metrics struct {
	reg *prometheus.Registry

	calls         *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	confirmations *prometheus.CounterVec
	loopGuard     *prometheus.CounterVec
	httpRequests  *prometheus.CounterVec
	authFailures  *prometheus.CounterVec
	rateLimited   prometheus.Counter
	cache         *prometheus.CounterVec
	quotaRefused  *prometheus.CounterVec
	resultTokens  *prometheus.HistogramVec
	tokens        *Tokens

	mu        sync.Mutex
	sessions  func() int
	providers func() []ProviderHealth
}

// New returns metrics registered on a fresh registry, with the Go runtime
// and process collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), tokens: NewTokens(0)}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "tool_calls_total",
		Help: "Tool calls through the pipeline, by canonical tool, provider, outcome (ok or the error code) and profile (default for /mcp).",
	}, []string{"tool", "provider", "outcome", "profile"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "tool_call_duration_seconds",
		Help:    "Tool call latency through the pipeline (below the audit log), by provider.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"provider"})
	m.resultTokens = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "result_tokens",
		Help:    "o200k_base tokens of the text the model receives for a call (the audit's result_tokens; characters/4 past 32 KiB), by canonical tool and provider.",
		Buckets: ResultTokenBuckets,
	}, []string{"tool", "provider"})
	m.confirmations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "confirmations_required_total",
		Help: "Calls answered CONFIRMATION_REQUIRED, by provider.",
	}, []string{"provider"})
	m.loopGuard = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "loop_guard_trips_total",
		Help: "Repeated identical failing calls the loop guard answered: escalated (REPEATED_FAILURE) or refused without reaching the backend.",
	}, []string{"action"})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests by route, method and status code.",
	}, []string{"route", "method", "code"})
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_auth_failures_total",
		Help: "HTTP requests refused by inbound auth, by reason.",
	}, []string{"reason"})
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_rate_limited_total",
		Help: "HTTP requests answered 429 by the per-token rate limit.",
	})
	m.quotaRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "quota_refusals_total",
		Help: "Tool calls refused by a quota (internal/quota), by canonical tool and limit (rate, concurrent or tokens).",
	}, []string{"tool", "limit"})
	m.cache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "cache_lookups_total",
		Help: "Calls the result cache could answer (cache: section), by provider and result (hit: answered from the cache, miss: the backend was called).",
	}, []string{"provider", "result"})
	sessions := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "sessions_active",
		Help: "MCP sessions currently connected.",
	}, func() float64 {
		m.mu.Lock()
		f := m.sessions
		m.mu.Unlock()
		if f == nil {
			return 0
		}
		return float64(f())
	})
	m.reg.MustRegister(m.calls, m.latency, m.confirmations, m.loopGuard, m.httpRequests, m.authFailures, m.rateLimited, m.quotaRefused, m.cache, m.resultTokens,
		sessions, &providerCollector{m: m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ResultTokenBuckets are agent_tools_result_tokens' buckets: 10 to 100k
// tokens, about three per decade.
var ResultTokenBuckets = []float64{10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000}

// Tokens is the per-tool and per-identity result-token totals the
// Middleware keeps (the console's Activity page).
func (m *Metrics) Tokens() *Tokens { return m.tokens }

// Registry is the Prometheus registry (for tests and extra collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// WatchSessions sets the function that counts connected sessions.
func (m *Metrics) WatchSessions(f func() int) {
	m.mu.Lock()
	m.sessions = f
	m.mu.Unlock()
}

// WatchProviders sets the function that reports provider health.
func (m *Metrics) WatchProviders(f func() []ProviderHealth) {
	m.mu.Lock()
	m.providers = f
	m.mu.Unlock()
}

// HTTPRequest counts one HTTP request.
func (m *Metrics) HTTPRequest(route, method string, code int) {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodPatch:
	default:
		method = "other"
	}
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
}

// AuthFailure counts one request refused by auth (reason is a fixed word).
func (m *Metrics) AuthFailure(reason string) { m.authFailures.WithLabelValues(reason).Inc() }

// RateLimited counts one 429.
func (m *Metrics) RateLimited() { m.rateLimited.Inc() }

// Middleware records every call that reaches it. It belongs between Audit
// and LoopGuard (pipeline.Options.Extra), so it sees the loop guard's answers
// and the canonical name Resolve filled in.
func (m *Metrics) Middleware() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
			start := time.Now()
			resp := next(ctx, req)
			elapsed := time.Since(start)
			// Label values are scrubbed like every other output (internal/redact).
			tool, prov := redact.String(req.Resolved.Canonical), redact.String(req.Resolved.Provider)
			if tool == "" {
				tool = "unresolved"
			}
			switch req.Via {
			case "resources/read", "resources/subscribe", "resources/unsubscribe", "completion/complete":
				// A forwarded request that is no tool call (passthrough
				// Op) is counted under its MCP method, not the URI it
				// names: URIs are unbounded label values.
				tool = req.Via
			}
			if prov == "" {
				prov = "unknown"
			}
			outcome := "ok"
			if resp.Failed() {
				outcome = string(toolerr.BackendError)
				if resp.Err != nil {
					outcome = string(resp.Err.Code)
				}
			}
			profile := req.Profile // a configured slug (bounded): the facade sets nothing else
			if profile == "" {
				profile = "default"
			}
			m.calls.WithLabelValues(tool, prov, outcome, profile).Inc()
			m.latency.WithLabelValues(prov).Observe(elapsed.Seconds())
			// The one count the audit and the quotas read (counted once per call).
			n, _ := resp.ResultTokens()
			m.resultTokens.WithLabelValues(tool, prov).Observe(float64(n))
			m.tokens.Add(time.Now(), tool, redact.String(req.Identity), n)
			if resp.Cache != "" { // hit or miss (internal/resultcache)
				m.cache.WithLabelValues(prov, resp.Cache).Inc()
			}
			if resp.Quota != nil {
				m.quotaRefused.WithLabelValues(tool, resp.Quota.Limit).Inc()
			}
			if resp.Err != nil {
				switch resp.Err.Code {
				case toolerr.ConfirmationRequired:
					m.confirmations.WithLabelValues(prov).Inc()
				case toolerr.RepeatedFailure:
					action := "escalated"
					if resp.Decision == "refused" {
						action = "refused"
					}
					m.loopGuard.WithLabelValues(action).Inc()
				}
			}
			return resp
		}
	}
}

// providerCollector reads provider health at scrape time.
type providerCollector struct{ m *Metrics }

var (
	providerUpDesc = prometheus.NewDesc(Namespace+"_provider_up",
		"1 when the provider is enabled and its last tool listing succeeded, else 0.", []string{"provider", "kind"}, nil)
	providerToolsDesc = prometheus.NewDesc(Namespace+"_provider_tools",
		"Tools the provider currently contributes to the catalog.", []string{"provider"}, nil)
)

func (c *providerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- providerUpDesc
	ch <- providerToolsDesc
}

func (c *providerCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	f := c.m.providers
	c.m.mu.Unlock()
	if f == nil {
		return
	}
	for _, p := range f() {
		up := 0.0
		if p.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(providerUpDesc, prometheus.GaugeValue, up, p.ID, p.Kind)
		ch <- prometheus.MustNewConstMetric(providerToolsDesc, prometheus.GaugeValue, float64(p.Tools), p.ID)
	}
}
