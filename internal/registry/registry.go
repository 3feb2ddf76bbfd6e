// Package registry keeps the live catalog: the providers, their tools under
// canonical names, their skills, and the search index over all of them. It is
// the library-level heart of the runtime and never imports a concrete provider.
package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Registry is safe for concurrent use. Refresh pulls each provider's current
// tools; readers always see a consistent snapshot.
type Registry struct {
	log *slog.Logger

	refreshMu sync.Mutex // one Refresh at a time

	mu        sync.RWMutex
	order     []string // provider ids in registration order (built-ins first)
	providers map[string]*entry
	byName    map[string]*catalog.Tool // canonical name → tool
	index     *index.Index
	indexer   *indexer // applies index updates in the background (indexer.go)
	listeners []func()

	opts       Options
	ruleWarned map[string]bool // unmatched policy rules already logged
	pinGen     uint64          // the Pinner's Generation the catalog reflects
}

type entry struct {
	p       provider.Provider
	info    catalog.ProviderInfo
	enabled bool
	tools   []catalog.Tool  // accepted tools, canonical names set, sorted by name
	raw     []catalog.Tool  // as last returned by the provider, for change detection
	skills  []catalog.Skill // accepted skills (see acceptSkillsLocked)
	rawSk   []catalog.Skill // as last returned by the provider, for change detection
	loadErr error
	diags   []provider.Diagnostic // naming rejections and collisions
	skDiags []provider.Diagnostic // skills skipped for their canonical name
	// conflicts are tools kept without a canonical name because the name
	// the scheme gives them is taken (an operator rename resolves them).
	conflicts []Conflict
	listed    bool // Tools succeeded at least once (see fresh)
	// held are the tools quarantined by their pin (canonical names), and
	// why (pins.Held*).
	held    []string
	heldWhy map[string]string
	// cached: the tools were installed from a list the provider read from
	// a cache, not yet confirmed by its backend (pins.go).
	cached bool
}

// New returns an empty registry with the default Options.
func New(log *slog.Logger) *Registry { return NewWith(log, Options{}) }

// NewWith returns an empty registry naming tools as o says.
func NewWith(log *slog.Logger, o Options) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Scheme == "" {
		o.Scheme = naming.Readable
	}
	o.Scan = o.Scan.Effective()
	ix := index.New()
	return &Registry{log: log, providers: map[string]*entry{}, byName: map[string]*catalog.Tool{}, index: ix,
		indexer: newIndexer(ix), opts: o, ruleWarned: map[string]bool{}}
}

// SetSemantic installs the index's semantic stage (embeddings); call it
// before adding providers so that every tool is embedded.
func (r *Registry) SetSemantic(s index.Semantic) { r.index.SetSemantic(s) }

// Semantic returns the index's semantic stage (nil: lexical only), once it
// has been given every change made to the catalog before the call (the
// index, which feeds it, is updated in the background: indexer.go).
func (r *Registry) Semantic() index.Semantic {
	r.indexer.wait()
	return r.index.Semantic()
}

// Add registers a provider; ids must be unique. It does not load tools: call Refresh.
func (r *Registry) Add(p provider.Provider) error {
	info := p.Info()
	if info.ID == "" {
		return fmt.Errorf("provider has an empty id")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.providers[info.ID]; dup {
		return fmt.Errorf("provider %q is registered twice", info.ID)
	}
	r.providers[info.ID] = &entry{p: p, info: info, enabled: true}
	r.order = append(r.order, info.ID)
	if cc, ok := provider.As[provider.CallChecker](p); ok && r.opts.Pins != nil {
		cc.SetCallCheck(r.checkCall) // no call is forwarded before its live definition is checked
	}
	return nil
}

// OnChange registers f to run (without locks held) after a Refresh or
// SetEnabled changed the visible catalog.
func (r *Registry) OnChange(f func()) {
	r.mu.Lock()
	r.listeners = append(r.listeners, f)
	r.mu.Unlock()
}

// Refresh asks every enabled provider that is not fresh (fresh.go; every one
// when ctx asks for a rescan) for its tools and updates the catalog and
// index for the providers whose tools changed. It reports whether anything changed.
// A provider that fails keeps its last good tools and records the error.
func (r *Registry) Refresh(ctx context.Context) bool {
	if ctx.Value(refreshedKey{}) == r && !provider.Rescan(ctx) {
		return false // this request already refreshed (see Refreshed)
	}
	if r.fresh(ctx) {
		return false // every provider says nothing changed (see fresh.go)
	}
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()

	changed := r.repinLocked()
	r.mu.RLock()
	ids := slices.Clone(r.order)
	r.mu.RUnlock()

	rescan := provider.Rescan(ctx)
	for _, id := range ids {
		r.mu.RLock()
		e := r.providers[id]
		skip := !e.enabled || !rescan && entryFresh(e) // fresh.go
		unchecked, cached := e.unchecked(), e.cached
		r.mu.RUnlock()
		if skip {
			continue
		}
		var tools []catalog.Tool
		var err error
		if ll, ok := provider.As[provider.LiveLister](e.p); ok && unchecked && provider.Rescan(ctx) {
			// A call names a tool held until the live list is checked: it
			// waits for the upstream, under its own deadline.
			tools, err = ll.ToolsLive(ctx)
		} else {
			tools, err = e.p.Tools(ctx)
		}
		var skills []catalog.Skill
		if sk, ok := e.p.(provider.Skiller); ok && err == nil {
			skills, err = sk.Skills(ctx)
		}
		if err != nil {
			r.mu.Lock()
			// Once per provider and error for the process: a broken
			// provider must not repeat itself on every unrelated call.
			switch {
			case e.loadErr != nil && e.loadErr.Error() == err.Error():
			case e.listed:
				r.log.Warn("provider failed to list tools; keeping its last good tools", "provider", id, "err", err)
			default:
				r.log.Warn("provider unavailable, its tools are left out (agent-tools doctor says why)", "provider", id, "err", err)
			}
			e.loadErr = err
			r.mu.Unlock()
			continue
		}
		info := e.p.Info() // an upstream describes itself once it has answered
		r.mu.Lock()
		e.loadErr, e.listed = nil, true
		if info.Description != e.info.Description {
			e.info.Description = info.Description
			changed = true
			r.installLocked(e, tools, skills) // the index carries the description
		} else if !sameTools(e.raw, tools) || !slices.EqualFunc(e.rawSk, skills, sameSkill) || cached && !fromCache(e.p) {
			r.installLocked(e, tools, skills)
			changed = true
		}
		r.mu.Unlock()
	}
	if changed {
		r.logRules()
		r.notify()
	}
	return changed
}

type refreshedKey struct{}

// Refreshed marks ctx as having refreshed r, so that later Refresh calls in
// the same request (the facade's, then the pipeline's) do not re-read every
// provider.
func (r *Registry) Refreshed(ctx context.Context) context.Context {
	return context.WithValue(ctx, refreshedKey{}, r)
}

// installLocked names, deduplicates and indexes one provider's tools. Tools
// are named in the order of their own names, so which of two colliding tools
// keeps the name never depends on the order the upstream listed them in;
// names taken by a provider registered earlier win (built-ins come first).
// A tool that loses is kept as a Conflict, never renamed automatically.
func (r *Registry) installLocked(e *entry, raw []catalog.Tool, skills []catalog.Skill) {
	id := e.info.ID
	for _, t := range e.tools {
		delete(r.byName, t.Canonical)
	}
	e.raw, e.rawSk, e.diags, e.conflicts = raw, skills, nil, nil
	sorted := slices.Clone(raw)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	renames := r.opts.Rename[id]
	e.tools = make([]catalog.Tool, 0, len(sorted))
	for _, t := range sorted {
		t.Provider = id
		if ov, ok := r.opts.Overrides[id][t.Name]; ok {
			t = ov.Apply(t) // the published definition is the overridden one
		}
		t.Digest = t.Def().Digest()
		canonical, err := r.canonicalLocked(e.info, t.Name, renames)
		if err != nil {
			r.log.Warn("tool rejected", "provider", id, "tool", t.Name, "err", err)
			e.diags = append(e.diags, provider.Diagnostic{Provider: id, Item: t.Name, Status: "skipped", Reason: err.Error()})
			continue
		}
		if owner, taken := r.byName[canonical]; taken {
			c := Conflict{Tool: t, Name: canonical, Owner: *owner}
			e.conflicts = append(e.conflicts, c)
			r.log.Warn("tool name collision", "provider", id, "tool", t.Name, "name", canonical, "taken_by", owner.Provider+":"+owner.Name)
			e.diags = append(e.diags, provider.Diagnostic{Provider: id, Item: t.Name, Status: "failed", Reason: c.Reason()})
			continue
		}
		t.Canonical = canonical
		e.tools = append(e.tools, t)
		r.byName[canonical] = &e.tools[len(e.tools)-1]
	}
	for name := range r.opts.Overrides[id] {
		if !slices.ContainsFunc(sorted, func(t catalog.Tool) bool { return t.Name == name }) {
			e.diags = append(e.diags, provider.Diagnostic{Provider: id, Item: name, Status: "warning",
				Reason: "overrides names a tool this provider does not offer"})
		}
	}
	for orig := range renames {
		if !slices.ContainsFunc(sorted, func(t catalog.Tool) bool { return t.Name == orig }) {
			e.diags = append(e.diags, provider.Diagnostic{Provider: id, Item: orig, Status: "warning",
				Reason: "rename names a tool this provider does not offer"})
		}
	}
	r.holdLocked(e)
	for i := range e.tools { // appending may have moved the elements: repoint the name map
		r.byName[e.tools[i].Canonical] = &e.tools[i]
	}
	r.acceptSkillsLocked(e)
	r.indexer.replace(e.info, e.tools, e.skills)
}

// SkillCanonical is the name policy, audit and the loop guard know a skill
// run by: "<provider>_<skill>", or bare "<skill>" for the host-local
// providers, under the naming scheme in force, as tool names are.
func SkillCanonical(scheme naming.Scheme, info catalog.ProviderInfo, name string) (string, error) {
	return scheme.Canonical(info.ID, name, info.HostLocal)
}

// acceptSkillsLocked decides, for every enabled provider, which of its
// skills are served: a skill whose canonical name is a tool's (of any
// provider) or an earlier skill's, or that has none, is skipped and
// reported to doctor. Tools win because their names are what clients call
// and policies name. A provider other than installed whose accepted skills
// change (a tool took or freed a name) is re-indexed.
func (r *Registry) acceptSkillsLocked(installed *entry) {
	seen := map[string]string{} // skill canonical → provider
	for _, id := range r.order {
		e := r.providers[id]
		if !e.enabled {
			continue
		}
		var accepted []catalog.Skill
		var diags []provider.Diagnostic
		for _, s := range e.rawSk {
			canonical, err := SkillCanonical(r.opts.Scheme, e.info, s.Name)
			switch {
			case err != nil:
			case r.byName[canonical] != nil:
				err = fmt.Errorf("skill name %q is already a tool's (of provider %q); the tool is kept", canonical, r.byName[canonical].Provider)
			case seen[canonical] != "":
				err = fmt.Errorf("skill name %q is already taken by a skill of provider %q; the first one is kept", canonical, seen[canonical])
			}
			if err != nil {
				diags = append(diags, provider.Diagnostic{Provider: id, Item: "skill " + s.Name, Status: "skipped", Reason: err.Error()})
				continue
			}
			seen[canonical] = id
			accepted = append(accepted, s)
		}
		changed := !slices.EqualFunc(e.skills, accepted, sameSkill)
		e.skills, e.skDiags = accepted, diags
		if changed && e != installed {
			r.indexer.replace(e.info, e.tools, e.skills)
		}
	}
}

func docs(info catalog.ProviderInfo, tools []catalog.Tool, skills []catalog.Skill) []index.Doc {
	out := make([]index.Doc, 0, len(tools)+len(skills))
	for _, t := range tools {
		out = append(out, index.Doc{
			ID: t.Canonical, Kind: "tool", Provider: info.ID, ProviderDescription: info.Description,
			Name: t.Name, Description: t.Description, Params: index.ParamsFromSchema(t.InputSchema),
		})
	}
	for _, s := range skills {
		out = append(out, index.Doc{
			ID: SkillID(info.ID, s.Name), Kind: "skill", Provider: info.ID, ProviderDescription: info.Description,
			Name: s.Name, Description: s.Description + " " + s.Args,
		})
	}
	return out
}

// SkillID is the index id of a skill.
func SkillID(providerID, name string) string { return "skill:" + providerID + ":" + name }

func sameTools(a, b []catalog.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] { // the provider handed back its cached slice
		return true
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Title != y.Title || x.Description != y.Description || x.ReadOnly != y.ReadOnly ||
			x.AlwaysConfirm != y.AlwaysConfirm || x.Timeout != y.Timeout || !bytes.Equal(x.InputSchema, y.InputSchema) ||
			!bytes.Equal(x.OutputSchema, y.OutputSchema) || !sameUpstream(x.Upstream, y.Upstream) {
			return false
		}
	}
	return true
}

// sameUpstream compares what flat mode publishes of an upstream tool.
func sameUpstream(a, b *catalog.UpstreamTool) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return bytes.Equal(a.Icons, b.Icons) && bytes.Equal(a.Meta, b.Meta) &&
		(a.Annotations == b.Annotations || a.Annotations != nil && b.Annotations != nil && reflect.DeepEqual(*a.Annotations, *b.Annotations))
}

func sameSkill(a, b catalog.Skill) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Args == b.Args && a.Mutates == b.Mutates &&
		slices.Equal(a.Related, b.Related)
}

func (r *Registry) notify() {
	r.mu.RLock()
	ls := slices.Clone(r.listeners)
	r.mu.RUnlock()
	for _, f := range ls {
		f()
	}
}

// SetEnabled turns a provider on or off at run time; its tools leave or join
// the catalog at once.
func (r *Registry) SetEnabled(ctx context.Context, id string, on bool) error {
	r.mu.Lock()
	e, ok := r.providers[id]
	if !ok {
		r.mu.Unlock()
		return fmt.Errorf("unknown provider %q", id)
	}
	if e.enabled == on {
		r.mu.Unlock()
		return nil
	}
	e.enabled = on
	if !on {
		for _, t := range e.tools {
			delete(r.byName, t.Canonical)
		}
		e.tools, e.raw, e.skills, e.rawSk, e.skDiags, e.listed = nil, nil, nil, nil, nil, false
		e.held, e.heldWhy, e.cached = nil, nil, false
		r.indexer.remove(id)
		r.acceptSkillsLocked(nil) // names it held may free other providers' skills
	}
	r.mu.Unlock()
	if on {
		r.Refresh(ctx)
	}
	r.notify()
	return nil
}

// Lookup resolves a canonical name.
func (r *Registry) Lookup(canonical string) (catalog.Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.byName[canonical]
	if !ok {
		return catalog.Tool{}, false
	}
	return *t, true
}

// Find resolves a tool inside one provider by its own name or its canonical name.
func (r *Registry) Find(providerID, name string) (catalog.Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.providers[providerID]
	if !ok || !e.enabled {
		return catalog.Tool{}, false
	}
	i, found := slices.BinarySearchFunc(e.tools, name, func(t catalog.Tool, n string) int { return strings.Compare(t.Name, n) })
	if found {
		return e.tools[i], true
	}
	if t, ok := r.byName[name]; ok && t.Provider == providerID {
		return *t, true
	}
	// The tool's name as the scheme writes it ("list.repos" → "list_repos"),
	// or an operator's rename, without the prefix.
	if c, err := r.canonicalLocked(e.info, name, nil); err == nil {
		if t, ok := r.byName[c]; ok && t.Provider == providerID {
			return *t, true
		}
	}
	return catalog.Tool{}, false
}

// Provider returns a provider and its info.
func (r *Registry) Provider(id string) (provider.Provider, catalog.ProviderInfo, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.providers[id]
	if !ok || !e.enabled {
		return nil, catalog.ProviderInfo{}, false
	}
	return e.p, e.info, true
}

// ProviderStatus is one provider's state for help, status and doctor.
type ProviderStatus struct {
	Info    catalog.ProviderInfo
	Enabled bool
	Tools   int
	Skills  []catalog.Skill
	Err     error
	// Listed: its tools were listed successfully at least once since it was
	// (re-)enabled; until then a provider is still starting (or failing).
	Listed bool
}

// Providers lists every registered provider in registration order.
func (r *Registry) Providers() []ProviderStatus {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]ProviderStatus, 0, len(r.order))
	for _, id := range r.order {
		e := r.providers[id]
		out = append(out, ProviderStatus{Info: e.info, Enabled: e.enabled, Tools: len(e.tools), Skills: e.skills, Err: e.loadErr, Listed: e.listed})
	}
	return out
}

// Tools lists a provider's tools sorted by name ("" lists every provider's).
func (r *Registry) Tools(providerID string) []catalog.Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []catalog.Tool
	for _, id := range r.order {
		e := r.providers[id]
		if e.enabled && (providerID == "" || providerID == id) {
			out = append(out, e.tools...)
		}
	}
	return out
}

// Skills lists a provider's served skills, sorted by name.
func (r *Registry) Skills(providerID string) []catalog.Skill {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.providers[providerID]
	if !ok || !e.enabled {
		return nil
	}
	return slices.Clone(e.skills)
}

// Skill finds a provider's skill by name.
func (r *Registry) Skill(providerID, name string) (catalog.Skill, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.providers[providerID]
	if !ok || !e.enabled {
		return catalog.Skill{}, false
	}
	for _, s := range e.skills {
		if s.Name == name {
			return s, true
		}
	}
	return catalog.Skill{}, false
}

// Search ranks tools and skills for a free-text query. It waits for the
// index to reflect every change made to the catalog before it was called
// (the index is built in the background: indexer.go).
func (r *Registry) Search(query string, o index.Options) []index.Hit {
	r.indexer.wait()
	return r.index.Search(query, o)
}

// Names returns every canonical name (for suggestions).
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Diagnostics gathers doctor lines: each provider's own, its rejected tool
// names, and its load error.
func (r *Registry) Diagnostics() []provider.Diagnostic {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []provider.Diagnostic
	for _, id := range r.order {
		e := r.providers[id]
		switch {
		case !e.enabled:
			out = append(out, provider.Diagnostic{Provider: id, Status: "skipped", Reason: "disabled"})
		case errors.Is(e.loadErr, provider.ErrStarting):
			// A slow upstream is not a failed one: doctor and the console's
			// problems say so, as the provider's state does.
			out = append(out, provider.Diagnostic{Provider: id, Status: "starting", Reason: e.loadErr.Error()})
		case isCode(e.loadErr, toolerr.ProviderNeedsLogin): // an upstream waiting for a person's login is not broken
			out = append(out, provider.Diagnostic{Provider: id, Status: "needs_login", Reason: e.loadErr.Error()})
		case e.loadErr != nil:
			out = append(out, provider.Diagnostic{Provider: id, Status: "failed", Reason: e.loadErr.Error()})
		}
		var own []provider.Diagnostic
		if d, ok := e.p.(provider.Diagnoser); ok {
			own = d.Diagnostics()
		}
		if e.enabled && e.loadErr == nil {
			out = append(out, provider.Diagnostic{Provider: id, Status: "ok", Reason: toolsReason(e, own)})
		}
		out = append(out, own...)
		out = append(out, e.diags...)
		out = append(out, e.skDiags...)
	}
	if r.opts.Pins != nil {
		pd := r.opts.Pins.DiagnosticsWith(r.opts.Scan)
		// A tool a pin line is about gets that line only: no "ok" row of
		// its provider's own beside "quarantined".
		about := map[string]bool{}
		for _, d := range pd {
			about[d.Provider+"\x00"+d.Item] = true
		}
		out = slices.DeleteFunc(out, func(d provider.Diagnostic) bool {
			if d.Status != "ok" || d.Item == "" {
				return false
			}
			return about[d.Provider+"\x00"+d.Item] || about[d.Provider+"\x00"+r.canonicalOf(d.Provider, d.Item)]
		})
		out = append(out, pd...)
	}
	return out
}

// toolsReason is doctor's line for a provider that listed: how many tools
// it serves ("1 tool", "3 tools") and, when a tool is missing, why: held
// back by its pin, rejected names, its own rows that are not ok (a skipped
// script), else what its own row says (an empty directory).
func toolsReason(e *entry, own []provider.Diagnostic) string {
	s := plural(len(e.tools), "tool", "tools")
	var why []string
	if n := len(e.held); n > 0 {
		why = append(why, plural(n, "tool", "tools")+" held back by its pin until approved (agent-tools pins list)")
	}
	if n := len(e.diags) + len(e.conflicts); n > 0 {
		why = append(why, plural(n, "name", "names")+" rejected or in conflict (below)")
	}
	bad := 0
	for _, d := range own {
		if d.Status != "ok" {
			bad++
		}
	}
	if bad > 0 {
		why = append(why, plural(bad, "row", "rows")+" below not ok")
	}
	if len(why) == 0 && len(e.tools) == 0 {
		why = append(why, "the provider lists none")
		if len(own) == 1 && own[0].Reason != "" {
			why[0] = own[0].Reason
		}
	}
	if len(why) == 0 {
		return s
	}
	return s + ": " + strings.Join(why, "; ")
}

// plural is "1 tool" or "n tools".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// canonicalOf is the canonical name of a provider's tool (r.mu held).
func (r *Registry) canonicalOf(providerID, name string) string {
	e, ok := r.providers[providerID]
	if !ok {
		return name
	}
	c, err := r.canonicalLocked(e.info, name, r.opts.Rename[providerID])
	if err != nil {
		return name
	}
	return c
}

// isCode reports whether err is a tool error with code.
func isCode(err error, code toolerr.Code) bool {
	te, ok := toolerr.As(err)
	return ok && te.Code == code
}
