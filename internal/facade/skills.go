package facade

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strings"

	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func indexOptions(providerID string) index.Options { return index.Options{Provider: providerID} }

func (f *Facade) skillSchema(desc string) map[string]any {
	confirm := prop("boolean", "Set to true to confirm a skill that changes state.")
	if f.tokenMode() {
		confirm = map[string]any{"type": []string{"boolean", "string"},
			"description": "To confirm a skill that changes state, pass the confirm token from its CONFIRMATION_REQUIRED error."}
	}
	return objectSchema(map[string]any{
		"skill":     prop("string", desc),
		"arguments": prop("object", "The skill's arguments, as discover describes them (`args`)."),
		"confirm":   confirm,
	}, []string{"skill"})
}

func (f *Facade) runSkillDef(p registry.ProviderStatus) toolDef {
	id := p.Info.ID
	name := metaName(id, "run_skill")
	names := make([]string, len(p.Skills))
	for i, s := range p.Skills {
		names[i] = s.Name
	}
	return toolDef{
		tool: &sdk.Tool{
			Name: name,
			Description: "Run a ready-made recipe of provider " + id + " that does a whole task in one call: {skill, arguments}. Skills: " +
				strings.Join(names, ", ") + ". " + metaName(id, "discover") + " with a query shows each skill's arguments.",
			InputSchema: f.skillSchema("The skill's name."),
			Annotations: &sdk.ToolAnnotations{Title: "Run a " + id + " skill", OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return f.runSkill(ctx, req, name, id), nil
		},
	}
}

// Bounds of the skills a server-wide run_skill names in its description.
const (
	skillsInDescMx    = 24
	skillsInDescChars = 400
)

// providersOf are the distinct prefixes of prefix:name skills.
func providersOf(skills []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range skills {
		p, _, _ := strings.Cut(s, ":")
		out[p] = true
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// searchRunSkillDef runs any provider's skill by prefix:name (search
// mode, and grouped progressive).
func (f *Facade) searchRunSkillDef() toolDef {
	var skills []string
	for _, p := range f.visibleProviders() {
		for _, s := range p.Skills {
			skills = append(skills, p.Info.ID+":"+s.Name)
		}
	}
	listed := strings.Join(skills, ", ")
	if len(skills) > skillsInDescMx || len(listed) > skillsInDescChars {
		// The list grows with the catalog: past a few lines, a count keeps
		// the default mode's tools/list bounded at any size.
		listed = fmt.Sprintf("%d, across %s; %s finds them", len(skills), plural(len(providersOf(skills)), "provider"), searchTool)
	}
	return toolDef{
		tool: &sdk.Tool{
			Name: runSkillTool,
			Description: "Run a ready-made recipe that does a whole task in one call: {skill: \"prefix:name\", arguments}. Skills: " +
				listed + ". " + searchTool + " shows each skill's arguments.",
			InputSchema: f.skillSchema("The skill as prefix:name."),
			Annotations: &sdk.ToolAnnotations{Title: "Run a skill", OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return f.runSkill(ctx, req, runSkillTool, ""), nil
		},
	}
}

// runSkill runs a provider's skill through the pipeline, like any call:
// audited, loop-guarded, validated, deny-checked and confirmed under the
// skill's canonical name, under a deadline. Every tool call the skill makes
// goes through the pipeline too, under the caller's session.
func (f *Facade) runSkill(ctx context.Context, mreq *sdk.CallToolRequest, via, providerID string) *sdk.CallToolResult {
	req := skillRequest(mreq.Params.Arguments, via, providerID, f.tokenMode())
	req.SkillCalls = &skillCaller{f: f, mreq: mreq, parent: req}
	return f.call(ctx, mreq, req)
}

// skillRequest parses {skill, arguments, confirm} into a pipeline skill run;
// parse failures become its Malformed error (still audited and guarded).
func skillRequest(raw json.RawMessage, via, providerID string, tokens bool) *pipeline.Request {
	req := &pipeline.Request{Via: via, Provider: providerID, Skill: true, Args: raw}
	m, e := decodeArgs(raw, via, "skill", "arguments", "confirm")
	var name string
	var confirm any
	if e == nil {
		e = firstErr(field(m, "skill", via, &name), field(m, "confirm", via, &confirm))
	}
	if e == nil {
		e = setConfirm(req, confirm, via, tokens)
	}
	if e == nil && providerID == "" {
		var ok bool
		if req.Provider, name, ok = strings.Cut(name, ":"); !ok {
			e = toolerr.New(toolerr.UnknownSkill, "Name the skill as prefix:name, as "+searchTool+" returns it.",
				"skill %q has no provider prefix", req.Provider)
		}
	}
	if e != nil {
		req.Malformed = e
		return req
	}
	req.Tool, req.Args = name, rawOrEmpty(m["arguments"])
	req.Shape = skillShape{via: via, skill: m["skill"]}
	return req
}

// skillShape renders a run of a run_skill tool; the skill is named as the
// caller named it (prefix:name for agent_tools_run_skill).
type skillShape struct {
	via   string
	skill json.RawMessage
}

func (s skillShape) Call(_ string, args json.RawMessage, confirm any) map[string]any {
	a := map[string]any{"skill": s.skill, "arguments": rawOrEmpty(args)}
	if confirm != nil {
		a["confirm"] = confirm
	}
	return map[string]any{"tool": s.via, "arguments": a}
}

// skillCaller runs a skill's tool calls through the pipeline. They carry the
// run's confirm flag (agent mode, as the agent passed it) and, once Policy
// confirmed the run, its confirmation: confirming a skill confirms the
// recipe it runs.
type skillCaller struct {
	f      *Facade
	mreq   *sdk.CallToolRequest
	parent *pipeline.Request
}

var _ provider.ToolCaller = (*skillCaller)(nil)

func (c *skillCaller) CallTool(ctx context.Context, canonical string, args json.RawMessage) (*provider.Result, error) {
	p := c.parent
	req := &pipeline.Request{Via: "skill:" + p.Provider + ":" + p.Tool, Tool: canonical, Args: args,
		Confirm: p.Confirm, Confirmed: p.Confirmed, Shape: searchShape{}}
	c.f.bindSession(c.mreq, req)
	resp := c.f.run(ctx, req)
	if resp.Err != nil {
		return nil, resp.Err
	}
	return resp.Result, nil
}
