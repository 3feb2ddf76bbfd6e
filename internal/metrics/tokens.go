package metrics

// Result-token totals for the console: what each tool returned to the
// model and what each identity received, in o200k_base tokens (the
// audit's result_tokens), since the process started and over the last
// minutes. Identities are no Prometheus label (they are unbounded), so the
// totals are kept here, beside the registry, by the same Middleware.

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// MaxTokenIdentities bounds the identities Tokens keeps apart; calls of
// the ones past it are totalled under OtherIdentity.
const MaxTokenIdentities = 1000

// Names Tokens gives a call without an identity (stdio, no auth) and the
// identities past MaxTokenIdentities.
const (
	NoIdentity    = "(none)"
	OtherIdentity = "(other)"
)

const tokenBucket = time.Minute // the window's resolution

// Tokens totals result tokens by tool and by identity. It is safe for
// concurrent use.
type Tokens struct {
	span time.Duration

	mu         sync.Mutex
	since      time.Time
	tools, ids map[string]*tokenTotal
	buckets    []tokenBuckets // oldest first, one per minute with calls, within span
}

type tokenTotal struct{ calls, tokens int64 }

type tokenBuckets struct {
	start      time.Time
	tools, ids map[string]*tokenTotal
}

// NewTokens returns empty totals with a window of span (0: the console's
// DefaultWindowSpan).
func NewTokens(span time.Duration) *Tokens {
	if span <= 0 {
		span = DefaultWindowSpan
	}
	return &Tokens{span: span, since: time.Now(), tools: map[string]*tokenTotal{}, ids: map[string]*tokenTotal{}}
}

// Add counts one call of tool by identity that returned n tokens.
func (t *Tokens) Add(now time.Time, tool, identity string, n int) {
	if identity == "" {
		identity = NoIdentity
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.ids[identity]; !ok && len(t.ids) >= MaxTokenIdentities {
		identity = OtherIdentity
	}
	add(t.tools, tool, n)
	add(t.ids, identity, n)
	start := now.Truncate(tokenBucket)
	if k := len(t.buckets); k == 0 || t.buckets[k-1].start.Before(start) {
		t.buckets = append(t.buckets, tokenBuckets{start: start, tools: map[string]*tokenTotal{}, ids: map[string]*tokenTotal{}})
		t.trim(now)
	}
	b := &t.buckets[len(t.buckets)-1]
	add(b.tools, tool, n)
	add(b.ids, identity, n)
}

func add(m map[string]*tokenTotal, k string, n int) {
	c := m[k]
	if c == nil {
		c = &tokenTotal{}
		m[k] = c
	}
	c.calls++
	c.tokens += int64(n)
}

// trim drops the buckets that ended before the window.
func (t *Tokens) trim(now time.Time) {
	from := now.Add(-t.span)
	i := 0
	for i < len(t.buckets) && !t.buckets[i].start.Add(tokenBucket).After(from) {
		i++
	}
	t.buckets = slices.Delete(t.buckets, 0, i)
}

// TokenTotals is what the console shows: rows by tool and by identity,
// the most tokens first.
type TokenTotals struct {
	// Since is when counting started (the process's start).
	Since time.Time `json:"since"`
	// WindowSeconds is the window the Window* columns cover (whole
	// minutes: the minute in progress and the ones before it).
	WindowSeconds float64    `json:"windowSeconds"`
	Tools         []TokenRow `json:"tools"`
	Identities    []TokenRow `json:"identities"`
}

// TokenRow is one tool's or identity's totals.
type TokenRow struct {
	Name         string `json:"name"`
	Calls        int64  `json:"calls"`
	Tokens       int64  `json:"tokens"`
	WindowCalls  int64  `json:"windowCalls"`
	WindowTokens int64  `json:"windowTokens"`
}

// Totals returns the totals at now.
func (t *Tokens) Totals(now time.Time) TokenTotals {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trim(now)
	return TokenTotals{Since: t.since, WindowSeconds: t.span.Seconds(),
		Tools:      t.rows(t.tools, func(b *tokenBuckets) map[string]*tokenTotal { return b.tools }),
		Identities: t.rows(t.ids, func(b *tokenBuckets) map[string]*tokenTotal { return b.ids })}
}

func (t *Tokens) rows(all map[string]*tokenTotal, of func(*tokenBuckets) map[string]*tokenTotal) []TokenRow {
	out := make([]TokenRow, 0, len(all))
	for name, c := range all {
		r := TokenRow{Name: name, Calls: c.calls, Tokens: c.tokens}
		for i := range t.buckets {
			if w := of(&t.buckets[i])[name]; w != nil {
				r.WindowCalls += w.calls
				r.WindowTokens += w.tokens
			}
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b TokenRow) int {
		if a.Tokens != b.Tokens {
			if a.Tokens > b.Tokens {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
