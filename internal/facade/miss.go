package facade

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Misses that teach (docs/modes.md, "Names" and "Errors that teach"). A model reuses names it saw
// anywhere: a tool's own name, its canonical name, the name another naming
// scheme or another provider gives it, a skill's name. Before the pipeline
// answers UNKNOWN_TOOL from edit distance alone, the facade looks the name
// up across every provider and both schemes and answers with the exact call
// that reaches the tool in this mode — or says why it cannot be reached
// (its upstream is down, its name collides, flat mode cannot publish it).

// conflicter is the registry's optional list of tools kept without a name.
type conflicter interface{ Conflicts() []registry.Conflict }

// flatLimiter is the registry's optional flat.maxNameLength.
type flatLimiter interface{ FlatMaxNameLength() int }

// flatMax is the longest name flat mode publishes.
func (f *Facade) flatMax() int {
	if l, ok := f.cat.(flatLimiter); ok {
		return l.FlatMaxNameLength()
	}
	return naming.MaxLen
}

// sighting is a tool a name refers to; conflict is set when it has no name.
type sighting struct {
	tool     catalog.Tool
	conflict *registry.Conflict
}

// locate finds the tools a name may mean, in provider order: by own name,
// canonical name, either scheme's name, or the own name with a prefix,
// case-insensitively.
func (f *Facade) locate(c *policy.Caller, name string) []sighting {
	low := strings.ToLower(strings.TrimSpace(name))
	if low == "" {
		return nil
	}
	hostLocal := map[string]bool{}
	for _, p := range f.cat.Providers() {
		hostLocal[p.Info.ID] = p.Info.HostLocal
	}
	matches := func(t catalog.Tool) bool {
		if strings.ToLower(t.Name) == low || (t.Canonical != "" && strings.ToLower(t.Canonical) == low) {
			return true
		}
		for _, s := range []naming.Scheme{naming.Readable, naming.Lossless} {
			if c, err := s.Canonical(t.Provider, t.Name, hostLocal[t.Provider]); err == nil && strings.ToLower(c) == low {
				return true
			}
		}
		rest, ok := strings.CutPrefix(low, strings.ToLower(t.Provider)+"_")
		return ok && rest == strings.ToLower(t.Name)
	}
	var out []sighting
	sees := f.seer(c)
	for _, t := range f.cat.Tools("") {
		if matches(t) && sees(t.Provider, t.Canonical) {
			out = append(out, sighting{tool: t})
		}
	}
	if c, ok := f.cat.(conflicter); ok {
		for _, cf := range c.Conflicts() {
			if matches(cf.Tool) {
				out = append(out, sighting{tool: cf.Tool, conflict: &cf})
			}
		}
	}
	return out
}

// resolvable reports whether the pipeline will find the requested tool.
func (f *Facade) resolvable(req *pipeline.Request) bool {
	var t catalog.Tool
	var ok bool
	if req.Provider != "" {
		t, ok = f.cat.Find(req.Provider, req.Tool)
	} else {
		t, ok = f.cat.Lookup(req.Tool)
	}
	if !ok {
		return false
	}
	if _, isFlat := req.Shape.(flatShape); isFlat {
		return len(t.Canonical) <= f.flatMax()
	}
	return true
}

// teachMiss sets req.Malformed when the requested tool cannot be resolved
// and the facade knows better than edit distance what was meant. It leaves
// everything else to the pipeline.
func (f *Facade) teachMiss(ctx context.Context, req *pipeline.Request) {
	if req.Malformed != nil || req.Skill || req.Tool == "" || f.resolvable(req) {
		return
	}
	if e := f.missError(ctx, req); e != nil {
		req.Malformed = e
	}
}

// Teach sets req.Malformed to a teaching error when req names no tool the
// way it was called: the same lookups as MCP calls, for the CLI.
func (f *Facade) Teach(req *pipeline.Request) { f.teachMiss(context.Background(), req) }

// missError is the teaching error for a name that does not reach a tool
// the way it was called, or nil when nothing better than the pipeline's
// edit-distance suggestions is known.
func (f *Facade) missError(ctx context.Context, req *pipeline.Request) *toolerr.Error {
	if req.Provider != "" {
		if e := f.unavailable(req.Provider); e != nil {
			return f.afterRescan(ctx, req, func() *toolerr.Error { return f.unavailable(req.Provider) })
		}
	}
	if e := f.metaMiss(ctx, req); e != nil { // unavailable.go: another mode's meta tool
		return e
	}
	if e := f.skillMiss(req); e != nil {
		return e
	}
	seen := f.locate(&req.Caller, req.Tool)
	if len(seen) == 0 {
		if e := f.nearMiss(req); e != nil {
			return e
		}
		if req.Provider != "" {
			return nil
		}
		down := func() *toolerr.Error { // unavailable.go: a down upstream's name
			e, bare := f.downFor(req.Tool)
			if e == nil {
				e = f.bareDown(req, bare)
			}
			return e
		}
		if down() == nil {
			return nil
		}
		return f.afterRescan(ctx, req, down)
	}
	s := seen[0]
	for _, x := range seen { // prefer the provider the call named
		if x.tool.Provider == req.Provider {
			s = x
			break
		}
	}
	t := s.tool
	if s.conflict != nil {
		return toolerr.New(toolerr.UnknownTool,
			"Tell the user: this tool cannot be called until the operator renames it. Do not retry.",
			"tool %q of provider %q exists, but %s", t.Name, t.Provider, s.conflict.Reason())
	}
	if len(t.Canonical) > f.flatMax() {
		if _, isFlat := req.Shape.(flatShape); isFlat {
			return toolerr.New(toolerr.UnknownTool,
				fmt.Sprintf("Flat mode cannot publish it. Reach it with the CLI (`agent-tools call %s`), or ask the operator to serve in mode progressive or search, to add `rename: {%q: <shorter name>}` to provider %q, or to raise flat.maxNameLength if every client accepts longer names.", t.Canonical, t.Name, t.Provider),
				"tool %q exists, but its name is %d characters, over this server's flat.maxNameLength %d", t.Canonical, len(t.Canonical), f.flatMax())
		}
	}
	shape, name := f.shapeFor(req, t)
	if name == req.Tool && (req.Provider == "" || req.Provider == t.Provider) {
		// The call already names the tool as this mode does: it did not
		// resolve a moment ago only because its provider was switched off
		// (and is back, or still racing a toggle). That is no naming
		// mistake to teach: the pipeline resolves it, and its gate says
		// PROVIDER_UNAVAILABLE if the provider is off when the call starts.
		return nil
	}
	where := ""
	if req.Provider != "" && req.Provider != t.Provider {
		where = fmt.Sprintf(" in provider %q; provider %q has it", req.Provider, t.Provider)
	}
	return toolerr.New(toolerr.UnknownTool, "Make the call in correct_shape: it names the tool as this mode expects.",
		"no tool named %q%s", req.Tool, where).
		With("did_you_mean", []string{name}).
		With("correct_shape", shape.Call(name, req.Args, nil))
}

// nearMiss handles a misspelt name that is close to no tool of the provider
// the call named but to tools of others: their names, in this mode's terms.
// Within one provider (or with no provider) the pipeline's edit-distance
// suggestions answer.
func (f *Facade) nearMiss(req *pipeline.Request) *toolerr.Error {
	if req.Provider == "" {
		return nil
	}
	var own, all []string
	byName := map[string]catalog.Tool{}
	sees := f.seer(&req.Caller)
	for _, t := range f.cat.Tools("") {
		if !sees(t.Provider, t.Canonical) {
			continue
		}
		if t.Provider == req.Provider {
			own = append(own, t.Name)
			continue
		}
		all = append(all, t.Canonical)
		byName[t.Canonical] = t
	}
	if len(text.Suggestions(req.Tool, own, 1)) > 0 {
		return nil
	}
	near := text.Suggestions(req.Tool, all, 3)
	if len(near) == 0 {
		return nil
	}
	var names []string
	var first pipeline.Shape
	var firstName string
	for i, c := range near {
		t := byName[c]
		shape, name := f.shapeFor(req, t)
		names = append(names, t.Provider+": "+name)
		if i == 0 {
			first, firstName = shape, name
		}
	}
	return toolerr.New(toolerr.UnknownTool, "No tool of this provider has a similar name; other providers have the ones in did_you_mean: make the call in correct_shape if it is what you meant.",
		"no tool named %q in provider %q", req.Tool, req.Provider).
		With("did_you_mean", names).
		With("correct_shape", first.Call(firstName, req.Args, nil))
}

// shapeFor is how this mode's call reaches t, and the name it takes.
func (f *Facade) shapeFor(req *pipeline.Request, t catalog.Tool) (pipeline.Shape, string) {
	switch s := req.Shape.(type) {
	case progressiveShape:
		return progressiveShape{via: metaName(t.Provider, "call")}, t.Name
	case textShape:
		return textShape{provider: t.Provider}, t.Name
	case nil:
		return searchShape{}, t.Canonical
	default:
		return s, t.Canonical
	}
}

// unavailable is PROVIDER_UNAVAILABLE for a provider whose last load failed
// and that has no tools to show: an upstream that never started is not an
// empty one.
func (f *Facade) unavailable(id string) *toolerr.Error {
	for _, p := range f.cat.Providers() {
		if p.Info.ID != id || p.Err == nil || p.Tools > 0 {
			continue
		}
		return unavailableErr(p) // unavailable.go
	}
	return nil
}

// skillMiss answers a call of a skill through a tool call with the
// run_skill call to make instead.
func (f *Facade) skillMiss(req *pipeline.Request) *toolerr.Error {
	id, name := req.Provider, req.Tool
	if id == "" {
		var ok bool
		if id, name, ok = strings.Cut(req.Tool, ":"); !ok {
			return nil
		}
	}
	s, ok := f.cat.Skill(id, name)
	if !ok {
		return nil
	}
	via, skill := metaName(id, "run_skill"), s.Name
	if f.opts.Mode != Progressive {
		via, skill = runSkillTool, id+":"+s.Name
	}
	args := map[string]any{"skill": skill, "arguments": rawOrEmpty(req.Args)}
	if _, isText := req.Shape.(textShape); isText {
		return toolerr.New(toolerr.UnknownTool, "Skills are run by run_skill, which text mode does not offer: use the tool "+via+" in mode progressive or search.",
			"%q is a skill of provider %q, not a tool", s.Name, id)
	}
	return toolerr.New(toolerr.UnknownTool, "Run it with "+via+" as correct_shape shows.",
		"%q is a skill of provider %q, not a tool", s.Name, id).
		With("correct_shape", map[string]any{"tool": via, "arguments": args})
}

// skillArgs shows a skill's declared args as an object when they are one
// (meta.args written as an object), else as the text the skill gave.
func skillArgs(args string) any {
	if isObject(json.RawMessage(args)) && json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	if args == "" {
		return nil
	}
	return args
}
