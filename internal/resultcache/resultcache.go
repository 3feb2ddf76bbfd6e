// Package resultcache keeps the results of read-only tool calls for a
// while (the top-level cache: section, docs/cache.md) and answers the same
// call again from them, as one pipeline stage between the result guard and
// Execute: every decision above it (resolve, the gate, validation,
// confirmation) is taken on every call, hit or miss, and the result guard
// reads a hit as it reads a fresh result.
//
// A result is kept under a key of: the caller's identity (unless the rule
// says perIdentity: false), the canonical tool and its provider, the
// tool's definition digest (a changed definition is another tool), the
// provider's generation (bumped when its catalog changes or one of its
// pins does) and the canonical arguments (with an override's hidden
// values, as the backend gets them). Only successful results are kept; a
// tool that is not read-only is never served from the cache, whatever the
// config says.
//
// Results live in a byte-bounded LRU in memory, or in the shared state
// store (Redis, with the rule's TTL) when the app has one.
package resultcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/state"
)

// Rule is one cache: entry.
type Rule struct {
	// Tools are path.Match globs over canonical names.
	Tools []string
	TTL   time.Duration
	// PerIdentity keys results by the caller's identity (the default).
	PerIdentity bool
}

// Options configure a Cache.
type Options struct {
	Rules []Rule
	// MaxBytes bounds the in-memory cache (0: DefaultMaxBytes).
	MaxBytes int64
	// Store, when set, holds the results instead of memory (the shared
	// state: Redis behind its local fallback); nil keeps them in memory.
	Store state.Store
	// MaxEntryBytes is the largest result kept in Store (0: 1 MiB).
	MaxEntryBytes int
	Now           func() time.Time
	Log           *slog.Logger
}

// DefaultMaxBytes bounds the in-memory cache when Options.MaxBytes is 0.
const DefaultMaxBytes = 64 << 20

// Audit values of pipeline.Response.Cache.
const (
	Hit  = "hit"
	Miss = "miss"
)

// Cache is the result cache. Safe for concurrent use.
type Cache struct {
	o   Options
	mem *lru

	mu      sync.Mutex
	gen     map[string]uint64 // provider → generation
	prints  map[string]string // provider → fingerprint of its tools (Changed)
	refused map[string]bool   // canonical+digest already logged as not read-only
}

// New returns a cache for the rules.
func New(o Options) *Cache {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxEntryBytes <= 0 {
		o.MaxEntryBytes = 1 << 20
	}
	// The LRU also serves while a shared store is degraded (Redis down):
	// the store's local fallback is bounded by keys, not bytes.
	return &Cache{o: o, mem: newLRU(o.MaxBytes), gen: map[string]uint64{}, prints: map[string]string{}, refused: map[string]bool{}}
}

// rule returns the first rule whose globs match canonical, and the glob.
func (c *Cache) rule(canonical string) (Rule, string, bool) {
	for _, r := range c.o.Rules {
		for _, g := range r.Tools {
			if ok, _ := path.Match(g, canonical); ok {
				return r, g, true
			}
		}
	}
	return Rule{}, "", false
}

// ReadOnly reports whether t may be served from the cache: a tool marked
// read-only and not marked to always need confirmation.
func ReadOnly(t catalog.Tool) bool { return t.ReadOnly && !t.AlwaysConfirm }

// Refusal is a tool a cache rule matches that is not read-only: never
// cached (doctor shows one line each).
type Refusal struct {
	Tool, Provider, Glob string
}

// Refused lists the tools a rule matches that are not read-only, and logs
// each once as an error (per definition).
func (c *Cache) Refused(tools []catalog.Tool) []Refusal {
	var out []Refusal
	for _, t := range tools {
		if ReadOnly(t) {
			continue
		}
		if _, g, ok := c.rule(t.Canonical); ok {
			out = append(out, Refusal{Tool: t.Canonical, Provider: t.Provider, Glob: g})
			c.logRefused(t, g)
		}
	}
	return out
}

func (c *Cache) logRefused(t catalog.Tool, glob string) {
	c.mu.Lock()
	seen := c.refused[t.Canonical+"\x00"+t.Digest]
	c.refused[t.Canonical+"\x00"+t.Digest] = true
	c.mu.Unlock()
	if !seen {
		c.o.Log.Error("cache: tool is not read-only; its results are never cached", "tool", t.Canonical, "provider", t.Provider, "glob", glob)
	}
}

// Drop forgets every result of the provider's tools (a pin change): its
// generation moves on, so no key made before matches again.
func (c *Cache) Drop(providerID string) {
	c.mu.Lock()
	c.gen[providerID]++
	c.mu.Unlock()
}

// Changed is told the catalog after it changed (registry.OnChange): every
// provider whose tools changed (added, removed, redefined) is dropped.
func (c *Cache) Changed(tools []catalog.Tool) {
	by := map[string][]string{}
	for _, t := range tools {
		by[t.Provider] = append(by[t.Provider], t.Canonical+"\x00"+t.Digest)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, list := range by {
		sort.Strings(list)
		h := sha256.New()
		for _, s := range list {
			io.WriteString(h, s)
			h.Write([]byte{0})
		}
		fp := string(h.Sum(nil))
		if old, ok := c.prints[id]; ok && old != fp {
			c.gen[id]++
		}
		c.prints[id] = fp
	}
	for id := range c.prints {
		if _, ok := by[id]; !ok { // gone (switched off, failed): its results go with it
			delete(c.prints, id)
			c.gen[id]++
		}
	}
}

func (c *Cache) generation(providerID string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen[providerID]
}

// cacheable reports whether the call may be answered from (and kept in)
// the cache at all, with its rule.
func (c *Cache) cacheable(req *pipeline.Request) (Rule, bool) {
	if req.Op || req.Skill || req.Backend == nil || req.Values.Script != nil || req.Values.Forward != nil {
		return Rule{}, false // a script's own tools object, a client's upstream session: not one call's answer
	}
	r, g, ok := c.rule(req.Resolved.Canonical)
	if !ok {
		return Rule{}, false
	}
	if !ReadOnly(req.Resolved) {
		c.logRefused(req.Resolved, g)
		return Rule{}, false
	}
	return r, true
}

// Key is the cache key of req under rule r (hex SHA-256).
func (c *Cache) Key(req *pipeline.Request, r Rule) string {
	h := sha256.New()
	who := "*"
	if r.PerIdentity {
		who = "i:" + req.Identity
	}
	t := req.Resolved
	for _, s := range []string{"v1", who, t.Provider, t.Canonical, t.Digest, strconv.FormatUint(c.generation(t.Provider), 10)} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	h.Write(pipeline.CanonicalArgs(t.FillHidden(req.Args)))
	return hex.EncodeToString(h.Sum(nil))
}

// Stage is the pipeline stage (pipeline.Options.ResultCache).
func (c *Cache) Stage() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, req *pipeline.Request) *pipeline.Response {
			r, ok := c.cacheable(req)
			if !ok {
				return next(ctx, req)
			}
			key := c.Key(req, r)
			if b, ok := c.get(ctx, key); ok {
				if res, err := decode(b); err == nil {
					return &pipeline.Response{Result: res, Cache: Hit}
				}
			}
			resp := next(ctx, req)
			resp.Cache = Miss
			if resp.Err == nil && resp.Result != nil && !resp.Result.IsError {
				if b, err := encode(resp.Result); err == nil {
					c.put(ctx, key, b, r.TTL)
				}
			}
			return resp
		}
	}
}

const storePrefix = "resultcache:"

// shared reports whether results go to the shared store now: one is set
// and it is not degraded to its local fallback.
func (c *Cache) shared() bool {
	if c.o.Store == nil {
		return false
	}
	r, ok := c.o.Store.(state.Reporter)
	return !ok || !r.Status().Degraded
}

func (c *Cache) get(ctx context.Context, key string) ([]byte, bool) {
	if !c.shared() {
		return c.mem.get(key, c.o.Now())
	}
	ctx, cancel := context.WithTimeout(ctx, state.OpTimeout)
	defer cancel()
	b, err := c.o.Store.Get(ctx, storePrefix+key)
	return b, err == nil
}

func (c *Cache) put(ctx context.Context, key string, b []byte, ttl time.Duration) {
	if !c.shared() {
		c.mem.put(key, b, c.o.Now().Add(ttl))
		return
	}
	if len(b) > c.o.MaxEntryBytes {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), state.OpTimeout)
	defer cancel()
	if err := c.o.Store.Put(ctx, storePrefix+key, b, ttl); err != nil {
		c.o.Log.Debug("cache: could not store a result", "err", err)
	}
}

// Stats are the in-memory cache's entries and the bytes they count as
// (what a shared store holds is not counted).
func (c *Cache) Stats() (entries int, bytes int64) { return c.mem.stats() }

// stored is a kept result: the text, the content blocks in MCP's own
// form (which decodes them back to their types) and the structured content.
type stored struct {
	Text       string          `json:"t"`
	Content    json.RawMessage `json:"c,omitempty"`
	Structured json.RawMessage `json:"s,omitempty"`
}

func encode(res *provider.Result) ([]byte, error) {
	s := stored{Text: res.Text}
	if res.Content != nil {
		b, err := json.Marshal(&sdk.CallToolResult{Content: res.Content})
		if err != nil {
			return nil, err
		}
		s.Content = b
	}
	if res.Structured != nil {
		b, err := json.Marshal(res.Structured)
		if err != nil {
			return nil, err
		}
		s.Structured = b
	}
	return json.Marshal(s)
}

// decode returns a fresh Result each time: a stage above may change it
// (the result guard redacts) without touching what is kept.
func decode(b []byte) (*provider.Result, error) {
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	res := &provider.Result{Text: s.Text}
	if len(s.Content) > 0 {
		var ctr sdk.CallToolResult
		if err := json.Unmarshal(s.Content, &ctr); err != nil {
			return nil, err
		}
		res.Content = slices.Clip(ctr.Content)
		if res.Content == nil {
			res.Content = []sdk.Content{}
		}
	}
	if len(s.Structured) > 0 {
		var v any
		dec := json.NewDecoder(bytes.NewReader(s.Structured))
		dec.UseNumber() // numbers as written: an int64 above 2^53 stays exact
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		res.Structured = v
	}
	return res, nil
}
