package pipeline

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// SkillCatalog is the optional capability of a Catalog that serves skills
// (the registry has it). Without it every skill run is UNKNOWN_SKILL.
type SkillCatalog interface {
	Skill(providerID, name string) (catalog.Skill, bool)
	Skills(providerID string) []catalog.Skill
}

// resolveSkill maps a skill run (Request.Skill: Provider and Tool name the
// skill) to a call-like catalog.Tool, so that every later stage treats it as
// any call: Validate checks its arguments against SkillSchema, Policy its
// canonical name and (when it mutates) confirmation, Execute runs it under a
// deadline, and Audit and the loop guard record it under that name.
func resolveSkill(gate *policy.Gate, cat Catalog, req *Request) *Response {
	sc, _ := cat.(SkillCatalog)
	p, info, ok := cat.Provider(req.Provider)
	var skill catalog.Skill
	found := false
	if ok && sc != nil {
		skill, found = sc.Skill(req.Provider, req.Tool)
	}
	// As: the backend may be wrapped (the app's gate for disabled providers).
	_, isSkiller := provider.As[provider.Skiller](p)
	if !ok || !isSkiller || !found {
		return fail(unknownSkill(gate, cat, req), "invalid")
	}
	canonical, err := registry.SkillCanonical(naming.SchemeOf(cat), info, skill.Name)
	if err != nil { // the registry serves no skill without a canonical name
		return fail(toolerr.New(toolerr.UnknownSkill, "Use one of the listed skills.", "skill %q has no valid name: %v", req.Tool, err), "invalid")
	}
	req.Resolved = catalog.Tool{
		Provider: info.ID, Name: skill.Name, Canonical: canonical, Description: skill.Description,
		InputSchema: SkillSchema(skill), ReadOnly: !skill.Mutates,
	}
	req.Info, req.Backend = info, p
	return nil
}

// unknownSkill answers a skill run that names no skill the caller may see,
// listing only the skills it may.
func unknownSkill(gate *policy.Gate, cat Catalog, req *Request) *toolerr.Error {
	var names []string
	sc, _ := cat.(SkillCatalog)
	if _, info, ok := cat.Provider(req.Provider); ok && sc != nil {
		for _, s := range sc.Skills(req.Provider) {
			c, err := registry.SkillCanonical(naming.SchemeOf(cat), info, s.Name)
			if err == nil && gate.Decide(&req.Caller, policy.See, policy.Target{Kind: policy.SkillTarget, Provider: info.ID, Canonical: c}).Allowed() {
				names = append(names, s.Name)
			}
		}
	}
	return toolerr.New(toolerr.UnknownSkill, "Use one of the listed skills.", "no skill %q in provider %q", clipName(req.Tool), clipName(req.Provider)).
		With("skills", names)
}

// SkillSchema is the input schema a skill run is validated against. Skills
// declare their arguments as prose (`args: 'days (required)...'`) or as an
// object of name → description, never as typed JSON Schema: so the
// arguments must be an object, and an object declaration names its
// properties (for the teaching error's expected_schema) without closing the
// set, since the prose may allow more.
func SkillSchema(s catalog.Skill) json.RawMessage {
	schema := map[string]any{"type": "object"}
	var declared map[string]any
	if json.Unmarshal([]byte(s.Args), &declared) == nil && len(declared) > 0 {
		props := make(map[string]any, len(declared))
		names := make([]string, 0, len(declared))
		for k := range declared {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			prop := map[string]any{}
			if d, ok := declared[k].(string); ok {
				prop["description"] = d
			}
			props[k] = prop
		}
		schema["properties"] = props
	} else if s.Args != "" {
		schema["description"] = s.Args
	}
	b, _ := json.Marshal(schema)
	return b
}

// runSkill is Execute for a skill run: the provider runs it, and the tool
// calls it makes go back through the pipeline by req.SkillCalls.
func runSkill(ctx context.Context, req *Request) (*provider.Result, error) {
	sk, _ := provider.As[provider.Skiller](req.Backend) // resolveSkill checked it
	caller := req.SkillCalls
	if caller == nil {
		caller = noCaller{}
	}
	return sk.RunSkill(ctx, req.Resolved.Name, req.Args, caller)
}

// noCaller serves skill runs whose caller gave no way to call tools.
type noCaller struct{}

func (noCaller) CallTool(_ context.Context, canonical string, _ json.RawMessage) (*provider.Result, error) {
	return nil, toolerr.New(toolerr.ProviderUnavailable, "Run the skill from an MCP client.", "this skill run cannot call tools (%q)", canonical)
}
