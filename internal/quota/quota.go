// Package quota is the pipeline stage that enforces the top-level quotas:
// list (docs/quotas.md): per identity and per tool glob, a call rate (a
// token bucket), calls in flight and result tokens per window. It sits
// right after the gate's Access stage, so every door (tool calls, skills,
// a script's tools.call, the console's try-a-call, the CLI) goes through
// it, and only a call the caller may make is counted.
//
// Every identity a quota matches gets its own bucket, slots and window
// (a quota with identities: ["token:*"] gives each token its own 30/min),
// shared by all the tools the quota's globs match. With server.redis set the
// bucket (GCRA, github.com/go-redis/redis_rate) and the token windows are
// in Redis, so a call on one replica counts on every other; when Redis
// fails the replica falls back to its own counts (logged once) and never
// fails a call for it. Calls in flight are counted per replica.
package quota

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Limits the stage refuses on, as errors and the audit name them.
const (
	LimitRate       = "rate"
	LimitConcurrent = "concurrent"
	LimitTokens     = "tokens"
)

// ConcurrentRetry is the retry_after_ms a refusal for calls in flight
// suggests: no one knows when a slot frees, so a short wait.
const ConcurrentRetry = 500 * time.Millisecond

// Options configure a Limiter.
type Options struct {
	Quotas []config.Quota
	// Redis shares buckets and token windows between replicas (nil: this
	// process only); Prefix namespaces its keys (state.Redis.Prefix).
	Redis  *redis.Client
	Prefix string
	// Local keeps the counts of this process; pass the same one to every
	// generation so that a reload does not reset them (nil: a fresh one).
	Local *Local
	// Now is the clock of the local buckets and of the token windows
	// (default time.Now).
	Now func() time.Time
	Log *slog.Logger
}

// Limiter checks calls against the quotas of one configuration.
type Limiter struct {
	quotas []compiled
	local  *Local
	shared *shared // nil without Redis
	now    func() time.Time
}

type compiled struct {
	config.Quota
	index int
	id    string // the quota's fingerprint: a changed quota starts afresh
	burst int
}

// New compiles the quotas.
func New(o Options) *Limiter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Local == nil {
		o.Local = NewLocal()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	l := &Limiter{local: o.Local, now: o.Now}
	if o.Redis != nil {
		l.shared = newShared(o.Redis, o.Prefix, o.Log)
	}
	for i, q := range o.Quotas {
		def, _ := json.Marshal(q)
		sum := sha256.Sum256(def)
		l.quotas = append(l.quotas, compiled{Quota: q, index: i, id: hex.EncodeToString(sum[:6]), burst: q.BurstOrDefault()})
	}
	return l
}

// matches reports whether q applies to this identity calling tool.
func (q *compiled) matches(identity, tool string) bool {
	return matchAny(q.Identities, identity) && matchAny(q.Tools, tool)
}

// matchAny: empty globs match everything (path.Match, as policy's globs).
func matchAny(globs []string, name string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// key is where q keeps one identity's state: the quota's index and
// fingerprint, and a hash of the identity (identities can be long).
func (q *compiled) key(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return fmt.Sprintf("quota:%d:%s:%s", q.index, q.id, hex.EncodeToString(sum[:8]))
}

// Stage is the pipeline middleware (pipeline.Options.Quota). Forwarded
// requests that are no tool call (resources, prompts, completions) pass.
func (l *Limiter) Stage() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		if len(l.quotas) == 0 {
			return next
		}
		return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
			if req.Op {
				return next(ctx, req)
			}
			return l.call(ctx, req, next)
		}
	}
}

type hit struct {
	q   *compiled
	key string
}

func (l *Limiter) call(ctx context.Context, req *pipeline.Request, next pipeline.Handler) *pipeline.Response {
	tool := req.Resolved.Canonical
	var hits []hit
	for i := range l.quotas {
		if q := &l.quotas[i]; q.matches(req.Identity, tool) {
			hits = append(hits, hit{q, q.key(req.Identity)})
		}
	}
	if len(hits) == 0 {
		return next(ctx, req)
	}
	now := l.now()
	// What consumes nothing first (token windows), then what can be given
	// back (slots), then what cannot (a bucket's token).
	for _, h := range hits {
		if h.q.Tokens.IsZero() {
			continue
		}
		start, end := window(now, h.q.Tokens.Period)
		used := l.usedTokens(ctx, windowKey(h.key, start))
		if used >= h.q.Tokens.N {
			r := refusal(h.q, LimitTokens, end.Sub(now))
			r.EstTokensUsed = used
			return refuse(req, r)
		}
	}
	var held []hit
	release := func() {
		for _, h := range held {
			l.local.release(h.key)
		}
	}
	for _, h := range hits {
		if h.q.Concurrent == 0 {
			continue
		}
		if !l.local.acquire(h.key, h.q.Concurrent) {
			release()
			return refuse(req, refusal(h.q, LimitConcurrent, ConcurrentRetry))
		}
		held = append(held, h)
	}
	for _, h := range hits {
		if h.q.Rate.IsZero() {
			continue
		}
		if ok, wait := l.take(ctx, h, now); !ok {
			release()
			return refuse(req, refusal(h.q, LimitRate, wait))
		}
	}
	resp := next(ctx, req)
	release()
	if toModel(req) {
		if n := estimateTokens(resp); n > 0 {
			for _, h := range hits {
				if !h.q.Tokens.IsZero() {
					start, _ := window(now, h.q.Tokens.Period)
					l.addTokens(ctx, windowKey(h.key, start), n, h.q.Tokens.Period)
				}
			}
		}
	}
	return resp
}

func (l *Limiter) take(ctx context.Context, h hit, now time.Time) (bool, time.Duration) {
	if l.shared != nil {
		if ok, wait, err := l.shared.take(ctx, h.key, h.q.Rate, h.q.burst); err == nil {
			return ok, wait
		}
	}
	return l.local.take(h.key, h.q.Rate, h.q.burst, now)
}

func (l *Limiter) usedTokens(ctx context.Context, key string) int64 {
	if l.shared != nil {
		if n, err := l.shared.used(ctx, key); err == nil {
			return n
		}
	}
	return l.local.used(key)
}

func (l *Limiter) addTokens(ctx context.Context, key string, n int64, period time.Duration) {
	if l.shared != nil {
		if err := l.shared.add(ctx, key, n, period); err == nil {
			return
		}
	}
	l.local.add(key, n, l.now().Add(period))
}

// toModel reports whether the call's result goes to the model: a
// script's calls (Run, Parent) and a skill's (Via "skill:…") reach it
// through the script's or skill's own result, which is counted.
func toModel(req *pipeline.Request) bool {
	return req.Run == "" && req.Parent == "" && !strings.HasPrefix(req.Via, "skill:")
}

// window is the fixed window of period that holds now, aligned to the
// Unix epoch (a day is a UTC day).
func window(now time.Time, period time.Duration) (start, end time.Time) {
	start = now.Truncate(period)
	return start, start.Add(period)
}

func windowKey(key string, start time.Time) string {
	return fmt.Sprintf("%s:w%d", key, start.Unix())
}

// estimateTokens is the result tokens the model receives, estimated as
// ceil(characters/4) of the result's text (or of the error's envelope):
// the product links no tokenizer (o200k), and a character count is cheap.
func estimateTokens(resp *pipeline.Response) int64 {
	var chars int
	switch {
	case resp.Err != nil:
		chars = utf8.RuneCountInString(resp.Err.JSON())
	case resp.Result != nil:
		chars = utf8.RuneCountInString(resp.Result.Text)
	}
	return int64((chars + 3) / 4)
}

func refusal(q *compiled, limit string, wait time.Duration) *pipeline.QuotaRefusal {
	ms := wait.Milliseconds()
	if wait > 0 && ms == 0 {
		ms = 1
	}
	return &pipeline.QuotaRefusal{Limit: limit, Index: q.index, Tools: q.Tools, RetryAfterMS: ms}
}

// refuse answers a call a quota refused: RATE_LIMITED for the rate and
// calls in flight, QUOTA_EXCEEDED for a window's result tokens; both say
// when to come back (retry_after_ms), so the loop guard does not count
// them.
func refuse(req *pipeline.Request, r *pipeline.QuotaRefusal) *pipeline.Response {
	tools := "every tool"
	if len(r.Tools) > 0 {
		tools = strings.Join(r.Tools, ", ")
	}
	var e *toolerr.Error
	switch r.Limit {
	case LimitTokens:
		e = toolerr.New(toolerr.QuotaExceeded,
			"Wait retry_after_ms (the quota's window ends then), then repeat the same call; or tell the user the quota is used up.",
			"quota %d (%s) allows no more result tokens in this window for this caller", r.Index, tools)
	case LimitConcurrent:
		e = toolerr.New(toolerr.RateLimited,
			"Wait retry_after_ms, then repeat the same call; do not start more calls of these tools at once.",
			"quota %d (%s) allows no more calls in flight for this caller", r.Index, tools)
	default:
		e = toolerr.New(toolerr.RateLimited,
			"Wait retry_after_ms, then repeat the same call.",
			"quota %d (%s) allows no more calls right now for this caller", r.Index, tools)
	}
	e.With("retry_after_ms", r.RetryAfterMS).With("limit", r.Limit).With("quota", r.Index)
	if len(r.Tools) > 0 {
		e.With("tools", r.Tools)
	}
	return &pipeline.Response{Err: e, Decision: "refused", Quota: r}
}
