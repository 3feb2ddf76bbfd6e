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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	index  int
	id     string // the quota's fingerprint: a changed quota starts afresh
	burst  int
	prefix string // "quota:<index>:<id>:", the start of every key

	keys  sync.Map // identity → key
	nkeys atomic.Int64
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
		id := hex.EncodeToString(sum[:6])
		l.quotas = append(l.quotas, compiled{Quota: q, index: i, id: id, burst: q.BurstOrDefault(), prefix: fmt.Sprintf("quota:%d:%s:", i, id)})
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
		if matchGlob(g, name) {
			return true
		}
	}
	return false
}

// matchGlob is path.Match(g, name), without its parse for the common
// glob "prefix*" (no other special character): a name with the prefix
// and no "/" after it.
func matchGlob(g, name string) bool {
	if n := len(g) - 1; n >= 0 && g[n] == '*' && !strings.ContainsAny(g[:n], `*?[\`) {
		return strings.HasPrefix(name, g[:n]) && !strings.Contains(name[n:], "/")
	}
	ok, _ := path.Match(g, name)
	return ok
}

// key is where q keeps one identity's state: the quota's index and
// fingerprint, and a hash of the identity (identities can be long).
// Keys are kept per identity (a hash and a format per call was most of
// the stage's cost), up to maxKeys identities, then started afresh.
func (q *compiled) key(identity string) string {
	if k, ok := q.keys.Load(identity); ok {
		return k.(string)
	}
	sum := sha256.Sum256([]byte(identity))
	k := q.prefix + hex.EncodeToString(sum[:8])
	if q.nkeys.Add(1) > maxKeys {
		q.keys.Clear()
		q.nkeys.Store(1)
	}
	q.keys.Store(identity, k)
	return k
}

// maxKeys bounds the identities whose keys a quota keeps.
const maxKeys = 4096

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
	// win is the key of the token window that holds the call's start
	// ("" when the quota has no tokens limit).
	win string
}

// maxHits is how many matching quotas a call keeps on the stack.
const maxHits = 4

func (l *Limiter) call(ctx context.Context, req *pipeline.Request, next pipeline.Handler) *pipeline.Response {
	tool := req.Resolved.Canonical
	var buf [maxHits]hit
	hits := buf[:0]
	var now time.Time
	for i := range l.quotas {
		if q := &l.quotas[i]; q.matches(req.Identity, tool) {
			if len(hits) == 0 {
				now = l.now()
			}
			h := hit{q: q, key: q.key(req.Identity)}
			if !q.Tokens.IsZero() {
				start, _ := window(now, q.Tokens.Period)
				h.win = windowKey(h.key, start)
			}
			hits = append(hits, h)
		}
	}
	if len(hits) == 0 {
		return next(ctx, req)
	}
	if l.shared == nil {
		return l.callLocal(ctx, req, next, hits, now)
	}
	// What consumes nothing first (token windows), then what can be given
	// back (slots), then what cannot (a bucket's token).
	for i := range hits {
		h := &hits[i]
		if h.win == "" {
			continue
		}
		if used := l.usedTokens(ctx, h.win); used >= h.q.Tokens.N {
			_, end := window(now, h.q.Tokens.Period)
			r := refusal(h.q, LimitTokens, end.Sub(now))
			r.EstTokensUsed = used
			return refuse(req, r)
		}
	}
	var heldBuf [maxHits]hit
	held := heldBuf[:0]
	for i := range hits {
		h := &hits[i]
		if h.q.Concurrent == 0 {
			continue
		}
		if !l.local.acquire(h.key, h.q.Concurrent) {
			l.release(held)
			return refuse(req, refusal(h.q, LimitConcurrent, ConcurrentRetry))
		}
		held = append(held, *h)
	}
	for i := range hits {
		h := &hits[i]
		if h.q.Rate.IsZero() {
			continue
		}
		if ok, wait := l.take(ctx, *h, now); !ok {
			l.release(held)
			return refuse(req, refusal(h.q, LimitRate, wait))
		}
	}
	resp := next(ctx, req)
	l.release(held)
	if toModel(req) {
		if n := estimateTokens(resp); n > 0 {
			for i := range hits {
				if h := &hits[i]; h.win != "" {
					l.addTokens(ctx, h.win, n, h.q.Tokens.Period)
				}
			}
		}
	}
	return resp
}

// callLocal is call without Redis: the same checks in the same order,
// under one lock of the local state before the call and one after (six
// lock round trips per call were most of the stage's cost).
func (l *Limiter) callLocal(ctx context.Context, req *pipeline.Request, next pipeline.Handler, hits []hit, now time.Time) *pipeline.Response {
	if r := l.local.admit(hits, now); r != nil {
		return refuse(req, r)
	}
	resp := next(ctx, req)
	var n int64
	if toModel(req) {
		n = estimateTokens(resp)
	}
	l.local.leave(hits, n, now)
	return resp
}

// release gives back the slots of held.
func (l *Limiter) release(held []hit) {
	for i := range held {
		l.local.release(held[i].key)
	}
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
	return key + ":w" + strconv.FormatInt(start.Unix(), 10)
}

// estimateTokens is the result tokens the model receives: the one count
// the audit (result_tokens) and the metrics read too,
// pipeline.Response.ResultTokens (o200k_base; characters/4 for a text
// over tokens.MaxExact bytes or before the tokenizer is loaded).
func estimateTokens(resp *pipeline.Response) int64 {
	n, _ := resp.ResultTokens()
	return int64(n)
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

// admit checks hits against the local state as call does (token windows,
// then slots, then buckets), under one lock; it holds the slots of the
// hits with a concurrent limit, or returns the refusal and holds nothing.
func (s *Local) admit(hits []hit, now time.Time) *pipeline.QuotaRefusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range hits {
		h := &hits[i]
		if h.win == "" {
			continue
		}
		if used := s.usedLocked(h.win); used >= h.q.Tokens.N {
			_, end := window(now, h.q.Tokens.Period)
			r := refusal(h.q, LimitTokens, end.Sub(now))
			r.EstTokensUsed = used
			return r
		}
	}
	for i := range hits {
		h := &hits[i]
		if h.q.Concurrent == 0 {
			continue
		}
		if !s.acquireLocked(h.key, h.q.Concurrent) {
			s.releaseHits(hits[:i])
			return refusal(h.q, LimitConcurrent, ConcurrentRetry)
		}
	}
	for i := range hits {
		h := &hits[i]
		if h.q.Rate.IsZero() {
			continue
		}
		if ok, wait := s.takeLocked(h.key, h.q.Rate, h.q.burst, now); !ok {
			s.releaseHits(hits)
			return refusal(h.q, LimitRate, wait)
		}
	}
	return nil
}

// leave gives back what admit held and counts n result tokens in the
// hits' windows.
func (s *Local) leave(hits []hit, n int64, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseHits(hits)
	if n <= 0 {
		return
	}
	for i := range hits {
		if h := &hits[i]; h.win != "" {
			s.addLocked(h.win, n, now.Add(h.q.Tokens.Period))
		}
	}
}

// releaseHits gives back the slots of the hits with a concurrent limit.
func (s *Local) releaseHits(hits []hit) {
	for i := range hits {
		if hits[i].q.Concurrent != 0 {
			s.releaseLocked(hits[i].key)
		}
	}
}
