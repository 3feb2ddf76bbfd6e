package config

import (
	"fmt"
	"path"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/naming"
)

// CacheRule is one entry of the top-level cache: list (docs/cache.md): the
// results of the read-only tools it names are kept for TTL and answer the
// same call again without reaching the backend.
//
//	cache:
//	  - tools: ["weather_*"]   # globs over canonical names; read-only tools only
//	    ttl: 5m
//	    perIdentity: true      # default: one caller's result never answers another
type CacheRule struct {
	// Tools are path.Match globs over canonical names. A matched tool that
	// is not read-only is never cached (refused at load when the config
	// itself says so, else at catalog build, with a doctor line).
	Tools []string `json:"tools" yaml:"tools"`
	// TTL is how long a result is served (more than 0, at most MaxCacheTTL).
	TTL Duration `json:"ttl" yaml:"ttl"`
	// PerIdentity nil or true keys results by the caller's identity too;
	// false lets one identity's result answer another's identical call.
	PerIdentity *bool `json:"perIdentity,omitempty" yaml:"perIdentity,omitempty"`
}

// MaxCacheTTL bounds cache[].ttl.
const MaxCacheTTL = 24 * time.Hour

// DefaultCacheBytes is limits.cacheBytes when unset: the in-memory result
// cache's bound (a shared Redis store is bounded by its own maxmemory).
const DefaultCacheBytes = 64 << 20

// IsPerIdentity reports whether results are keyed by identity (the default).
func (r CacheRule) IsPerIdentity() bool { return r.PerIdentity == nil || *r.PerIdentity }

// CacheBytesOrDefault is limits.cacheBytes in force.
func (l Limits) CacheBytesOrDefault() int64 {
	if l.CacheBytes > 0 {
		return l.CacheBytes
	}
	return DefaultCacheBytes
}

// cacheKey decodes the top-level cache: list.
func (d *Decoder) cacheKey(v *yaml.Node, p string, c *Config) {
	c.Cache = nil
	d.sequence(v, p, func(_ int, item *yaml.Node, ip string) {
		var r CacheRule
		if item != nil {
			d.Decode(item, ip, &r)
		}
		c.Cache = append(c.Cache, r)
	})
}

// decodeField decodes limits.cacheBytes, a size with a unit ("64MiB")
// or a number of bytes; the other keys decode by type.
func (l *Limits) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "cacheBytes" {
		return false
	}
	s, ok := d.str(v, p, false)
	if !ok {
		return true
	}
	n, err := ParseSize(s)
	if err != nil || n < 0 {
		d.errAt(v, p, "want a size such as 64MiB (or a number of bytes)")
		return true
	}
	l.CacheBytes = n
	return true
}

var _ fieldDecoder = (*Limits)(nil)

// validateCache checks cache: entries: globs, TTLs, and that no glob
// matches a tool the config itself marks as changing state (an override's
// readOnlyHint: false or destructiveHint: true). Globs over tools the
// config does not name are checked against the catalog when it is built.
func (v *Validator) validateCache() {
	lossless := v.c.Naming == string(naming.Lossless)
	mutating := v.mutatingByConfig()
	for i, r := range v.c.Cache {
		ep := index("cache", i)
		if v.bad(ep) {
			continue
		}
		tp := joinKey(ep, "tools")
		if len(r.Tools) == 0 && !v.bad(tp) {
			v.errf(ep, "a cache entry needs tools: (globs over canonical names, e.g. [\"weather_*\"])")
		}
		for j, pat := range r.Tools {
			gp := index(tp, j)
			if v.bad(gp) {
				continue
			}
			if msg := checkGlob(pat, lossless); msg != "" {
				v.errf(gp, "pattern %s %s", v.show(gp, pat), msg)
				continue
			}
			for _, m := range mutating {
				if ok, _ := path.Match(pat, m.canonical); ok {
					v.errf(gp, "pattern %s matches %s, which %s marks as changing state: only read-only tools are cached", v.show(gp, pat), m.canonical, m.where)
					break
				}
			}
		}
		ttp := joinKey(ep, "ttl")
		switch d := r.TTL.Duration; {
		case v.bad(ttp):
		case !v.c.Sets(ttp) && d == 0:
			v.errf(ep, "a cache entry needs ttl: (how long a result is served, e.g. 5m)")
		case d <= 0:
			v.errf(ttp, "want a ttl above 0 (e.g. 5m), got %s", r.TTL)
		case d > MaxCacheTTL:
			v.errf(ttp, "want a ttl of at most %s, got %s", MaxCacheTTL, r.TTL)
		}
	}
}

type configMutating struct{ canonical, where string }

// mutatingByConfig lists the tools an enabled provider's overrides mark as
// changing state, under their canonical names.
func (v *Validator) mutatingByConfig() []configMutating {
	var out []configMutating
	scheme := v.c.Scheme()
	for i, p := range v.c.Providers {
		tools := make([]string, 0, len(p.Overrides))
		for tool := range p.Overrides {
			tools = append(tools, tool)
		}
		sort.Strings(tools)
		for _, tool := range tools {
			a := p.Overrides[tool].Annotations
			if a == nil || !((a.ReadOnlyHint != nil && !*a.ReadOnlyHint) || (a.DestructiveHint != nil && *a.DestructiveHint)) {
				continue
			}
			name := tool
			if r, ok := p.Rename[tool]; ok && r != "" {
				name = r
			}
			canonical, err := scheme.Canonical(p.ID, name, false)
			if err != nil {
				continue
			}
			out = append(out, configMutating{canonical, fmt.Sprintf("providers[%d].overrides.%s", i, tool)})
		}
	}
	return out
}
