package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Quota is one entry of the top-level quotas: list (internal/quota,
// docs/quotas.md): for callers whose identity matches one of Identities
// (path.Match globs, as policy.rules' identities; empty = every caller),
// calling a tool whose canonical name matches one of Tools (globs; empty =
// every tool), at most Rate calls (a token bucket of Burst), Concurrent
// calls in flight and Tokens result tokens per window. Each matching
// identity has its own bucket, slots and window.
type Quota struct {
	Identities []string `json:"identities,omitempty" yaml:"identities,omitempty"`
	Tools      []string `json:"tools,omitempty" yaml:"tools,omitempty"`
	// Rate is calls per period ("30/min"), a token bucket; zero: no rate.
	Rate PerPeriod `json:"rate,omitzero" yaml:"rate,omitempty"`
	// Burst is the bucket's size (0: the default, DefaultBurst of Rate).
	Burst int `json:"burst,omitempty" yaml:"burst,omitempty"`
	// Concurrent bounds the calls in flight (0: no bound).
	Concurrent int `json:"concurrent,omitempty" yaml:"concurrent,omitempty"`
	// Tokens bounds the result tokens the model receives per window
	// ("200000/day"), counted in o200k_base tokens (pipeline.Response.ResultTokens); zero: no bound.
	Tokens PerPeriod `json:"tokens,omitzero" yaml:"tokens,omitempty"`
	// Pos is where the entry starts in the file (zero for code-built configs).
	Pos Pos `json:"-" yaml:"-"`
}

// PerPeriod is "N/unit": N per second, minute, hour or day.
type PerPeriod struct {
	N      int64
	Period time.Duration
}

// IsZero reports an unset limit.
func (p PerPeriod) IsZero() bool { return p.N == 0 }

// String writes p as the file does ("30/min").
func (p PerPeriod) String() string {
	if p.IsZero() {
		return ""
	}
	for _, u := range periodUnits {
		if u.d == p.Period {
			return strconv.FormatInt(p.N, 10) + "/" + u.names[0]
		}
	}
	return strconv.FormatInt(p.N, 10) + "/" + p.Period.String()
}

// MarshalJSON writes p as its text.
func (p PerPeriod) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(p.String())), nil }

// MaxDefaultBurst caps the default burst (a rate's N): a quota of 10000/day
// does not let all of a day's calls through at once unless burst says so.
const MaxDefaultBurst = 100

// BurstOrDefault is the bucket size in force: Burst, else Rate's N capped
// at MaxDefaultBurst.
func (q Quota) BurstOrDefault() int {
	if q.Burst > 0 {
		return q.Burst
	}
	return int(min(q.Rate.N, MaxDefaultBurst))
}

var periodUnits = []struct {
	names []string
	d     time.Duration
}{
	{[]string{"sec", "s", "second"}, time.Second},
	{[]string{"min", "m", "minute"}, time.Minute},
	{[]string{"hour", "h"}, time.Hour},
	{[]string{"day", "d"}, 24 * time.Hour},
}

// maxPerPeriod bounds N: far beyond any useful quota, well inside int64
// arithmetic (and Lua's doubles in Redis).
const maxPerPeriod = 1 << 40

// ParsePerPeriod parses "N/unit" (unit sec|min|hour|day, or s|m|h|d).
func ParsePerPeriod(s string) (PerPeriod, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return PerPeriod{}, fmt.Errorf("want N/unit, e.g. 30/min (unit sec, min, hour or day)")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 1 || n > maxPerPeriod {
		return PerPeriod{}, fmt.Errorf("want a whole number from 1 to %d before the /, e.g. 30/min", int64(maxPerPeriod))
	}
	unit = strings.TrimSpace(unit)
	for _, u := range periodUnits {
		for _, name := range u.names {
			if unit == name {
				return PerPeriod{N: n, Period: u.d}, nil
			}
		}
	}
	return PerPeriod{}, fmt.Errorf("unknown unit %q after the / (want sec, min, hour or day; or s, m, h, d)", clip(unit))
}

// quotas decodes the top-level quotas: list.
func (d *Decoder) quotas(v *yaml.Node, path string, c *Config) {
	c.Quotas = nil
	d.sequence(v, path, func(_ int, item *yaml.Node, ip string) {
		var q Quota
		errs := len(d.errs)
		if !d.Decode(item, ip, &q) {
			c.Quotas = append(c.Quotas, q)
			return
		}
		q.Pos = pos(item)
		if len(d.errs) == errs { // the rules between keys, once each key decoded
			switch {
			case q.Rate.IsZero() && q.Concurrent == 0 && q.Tokens.IsZero():
				d.errAt(item, ip, "a quota needs at least one of rate, concurrent or tokens")
			case q.Burst > 0 && q.Rate.IsZero():
				d.errAt(item, joinKey(ip, "burst"), "burst is the size of rate's bucket: set rate too, e.g. rate: 30/min")
			}
		}
		c.Quotas = append(c.Quotas, q)
	})
}

// decodeField decodes rate and tokens ("N/unit") and checks that burst and
// concurrent, when given, are at least 1.
func (q *Quota) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	switch key {
	case "rate", "tokens":
		s, ok := d.str(v, p, true)
		if !ok {
			return true
		}
		pp, err := ParsePerPeriod(s)
		if err != nil {
			d.errAt(v, p, "%s %s: %v", key, quoteOrVar(d, p, s), err)
			return true
		}
		if key == "rate" {
			q.Rate = pp
		} else {
			q.Tokens = pp
		}
	case "burst", "concurrent":
		n := -1
		d.integer(v, p, &n)
		if d.meta.bad[p] || n == -1 && isNull(v) {
			if !d.meta.bad[p] {
				d.errAt(v, p, "want a whole number of at least 1, got null")
			}
			return true
		}
		if n < 1 {
			d.errAt(v, p, "%s must be at least 1, got %d", key, n)
			return true
		}
		if key == "burst" {
			q.Burst = n
		} else {
			q.Concurrent = n
		}
	default:
		return false
	}
	return true
}

// quoteOrVar quotes s for a message, or names the variables it came from.
func quoteOrVar(d *Decoder, p, s string) string {
	if vars := d.meta.vars[p]; len(vars) > 0 {
		return from(vars)
	}
	return strconv.Quote(clip(s))
}

// quotas checks the globs of every quota: identities as policy.rules'
// identities, tools as policy.allow.
func (v *Validator) quotas() {
	for i, q := range v.c.Quotas {
		qp := index("quotas", i)
		if v.bad(qp) {
			continue
		}
		for j, id := range q.Identities {
			if ip := index(joinKey(qp, "identities"), j); !v.bad(ip) {
				if msg := checkGlob(id, false); msg != "" {
					v.errf(ip, "identity pattern %s %s", v.show(ip, id), msg)
				}
			}
		}
		v.globs(joinKey(qp, "tools"), q.Tools)
	}
}

var _ fieldDecoder = (*Quota)(nil)
