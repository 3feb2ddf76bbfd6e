package facade

import (
	"encoding/json"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
)

// hit is one discover/search result, shaped so one result is usually enough
// to make a correct call.
type hit struct {
	Kind        string            `json:"kind"`
	Name        string            `json:"name"`
	Provider    string            `json:"provider,omitempty"`
	Description string            `json:"description"`
	Required    []string          `json:"required,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
	ReadOnly    *bool             `json:"readOnly,omitempty"`
	InputSchema json.RawMessage   `json:"inputSchema,omitempty"`
	Args        any               `json:"args,omitempty"` // a skill's declared args: an object when declared as one
	Related     []catalog.Related `json:"related,omitempty"`
	Why         string            `json:"why,omitempty"`
	// Signature is the TypeScript-style declaration (code mode), which
	// replaces required and params.
	Signature string `json:"signature,omitempty"`
}

// toolHit describes a tool; in progressive mode its name is the provider's own
// tool name (what _call takes), elsewhere the canonical name.
func toolHit(t catalog.Tool, withSchema bool, mode Mode) hit {
	name := t.Name // what a provider-scoped call (progressive, text) takes
	spec := specOf(mode)
	if spec.canonicalHits {
		name = t.Canonical
	}
	ro := t.ReadOnly
	h := hit{Kind: "tool", Name: name, Provider: t.Provider, Description: firstLine(t.Description, descLen), ReadOnly: &ro}
	if spec.signatures {
		h.Signature = codemode.Signature(t.Canonical, t.InputSchema, t.OutputSchema)
	} else {
		h.Required, h.Params = schemaSummary(t.InputSchema)
	}
	if withSchema {
		h.InputSchema = t.InputSchema
	}
	return h
}

// rank answers a query: ranked tools and skills (skills with their related
// links) the caller can see (its grant g; nil = no per-identity rules).
func (f *Facade) rank(g *policy.Grant, a discoverArgs, o index.Options, callVia string) map[string]any {
	o.Limit = a.Limit
	adaptive := o.Limit == 0
	if adaptive {
		o.Limit = index.DefaultCut.Max
	}
	o.Limit = min(o.Limit, maxHits)
	o.Explain = true
	hits := f.cat.Search(a.Query, o)
	results := make([]hit, 0, len(hits))
	scores := make([]float64, 0, len(hits))
	for _, h := range hits {
		switch h.Kind {
		case "skill":
			name := strings.TrimPrefix(h.ID, "skill:"+h.Provider+":")
			s, ok := f.cat.Skill(h.Provider, name)
			_, info, loaded := f.cat.Provider(h.Provider)
			if !ok || !loaded || !f.skillVisibleTo(g, info, s.Name) {
				continue
			}
			sk := hit{Kind: "skill", Name: s.Name, Provider: h.Provider, Description: firstLine(s.Description, descLen), Args: skillArgs(s.Args), Related: s.Related, Why: h.Why}
			if f.opts.Mode == Search {
				sk.Name = h.Provider + ":" + s.Name
			}
			results = append(results, sk)
			scores = append(scores, h.Score)
		default:
			t, ok := f.cat.Lookup(h.ID)
			if !ok || !f.visibleTo(g, t.Provider, t.Canonical) {
				continue
			}
			th := toolHit(t, a.Schemas || len(results) < schemaHits && !specOf(f.opts.Mode).signatures, f.opts.Mode) // a signature is enough
			th.Why = h.Why
			results = append(results, th)
			scores = append(scores, h.Score)
		}
	}
	if adaptive { // as many hits as the scores warrant, within a token budget
		cut := index.DefaultCut
		cut.Cost = func(i int) int { b, _ := json.Marshal(results[i]); return len(b) / 4 }
		results = results[:index.Cut(scores, cut)]
	}
	out := map[string]any{"query": a.Query, "results": results}
	if o.Provider != "" {
		out["provider"] = o.Provider
	}
	switch {
	case len(results) == 0:
		out["next"] = "Nothing matched. Try other words, list the tools without a query, or call " + helpTool + " to see other providers."
	case results[0].Kind == "skill":
		out["next"] = f.skillNext(results[0], callVia)
	case specOf(f.opts.Mode).signatures:
		out["next"] = "Call the tools from one " + codeTool + " script: await tools.call(name, args), as each signature says."
	default:
		out["next"] = "Call " + callVia + " with the name and arguments of the best result."
	}
	f.unavailableNote(out, o, len(results)) // unavailable.go: a down upstream is not an empty one
	return out
}

// skillNext is the next step when a skill is the best result: skills run
// through run_skill, never through call.
func (f *Facade) skillNext(top hit, callVia string) string {
	switch f.opts.Mode {
	case Progressive:
		return "The best result is a skill: run it with " + metaName(top.Provider, "run_skill") + "({skill: \"" + top.Name + "\", arguments}). Tools are called with " + callVia + "."
	case Search:
		return "The best result is a skill: run it with " + runSkillTool + "({skill: \"" + top.Name + "\", arguments}). Tools are called with " + callVia + "."
	}
	return "The best result is a skill, which runs through run_skill (mode progressive or search); tools are called with " + callVia + "."
}
