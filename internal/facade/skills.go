package facade

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func indexOptions(providerID string) index.Options { return index.Options{Provider: providerID} }

func skillSchema(desc string) map[string]any {
	return objectSchema(map[string]any{
		"skill":     prop("string", desc),
		"arguments": prop("object", "The skill's arguments, as discover describes them (`args`)."),
		"confirm":   prop("boolean", "Set to true to confirm a skill that changes state."),
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
		tool: &mcp.Tool{
			Name: name,
			Description: "Run a ready-made recipe of provider " + id + " that does a whole task in one call: {skill, arguments}. Skills: " +
				strings.Join(names, ", ") + ". " + metaName(id, "discover") + " with a query shows each skill's arguments.",
			InputSchema: skillSchema("The skill's name."),
			Annotations: &mcp.ToolAnnotations{Title: "Run a " + id + " skill", OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return f.runSkill(ctx, req, name, id), nil
		},
	}
}

func (f *Facade) globalRunSkillDef(skills []string) toolDef {
	return toolDef{
		tool: &mcp.Tool{
			Name: runSkillTool,
			Description: "Run a ready-made recipe that does a whole task in one call: {skill: \"prefix:name\", arguments}. Skills: " +
				strings.Join(skills, ", ") + ". " + searchTool + " shows each skill's arguments.",
			InputSchema: skillSchema("The skill as prefix:name."),
			Annotations: &mcp.ToolAnnotations{Title: "Run a skill", OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return f.runSkill(ctx, req, runSkillTool, ""), nil
		},
	}
}

// runSkill runs a provider's skill; every tool call the skill makes goes
// through the full pipeline under the caller's session.
func (f *Facade) runSkill(ctx context.Context, mreq *mcp.CallToolRequest, via, providerID string) *mcp.CallToolResult {
	m, e := decodeArgs(mreq.Params.Arguments, via, "skill", "arguments", "confirm")
	var name string
	var confirm bool
	if e == nil {
		e = firstErr(field(m, "skill", via, &name), field(m, "confirm", via, &confirm))
	}
	if e != nil {
		return errorResult(e)
	}
	if providerID == "" {
		var ok bool
		providerID, name, ok = strings.Cut(name, ":")
		if !ok {
			return errorResult(toolerr.New(toolerr.UnknownSkill, "Name the skill as prefix:name, as "+searchTool+" returns it.",
				"skill %q has no provider prefix", providerID))
		}
	}
	p, info, ok := f.cat.Provider(providerID)
	sk, isSkiller := p.(provider.Skiller)
	skill, found := f.cat.Skill(providerID, name)
	if !ok || !isSkiller || !found {
		var names []string
		for _, st := range f.cat.Providers() {
			if st.Info.ID == providerID {
				for _, s := range st.Skills {
					names = append(names, s.Name)
				}
			}
		}
		return errorResult(toolerr.New(toolerr.UnknownSkill, "Use one of the listed skills.", "no skill %q in provider %q", name, providerID).
			With("skills", names))
	}
	if skill.Mutates && info.RequireConfirm && !confirm {
		return errorResult(toolerr.New(toolerr.ConfirmationRequired,
			"This skill changes state. If the user wants this change, repeat the call with confirm: true.",
			"skill %q changes state and needs confirmation", name).
			With("retry", map[string]any{"tool": via, "arguments": map[string]any{"skill": m["skill"], "arguments": rawOrEmpty(m["arguments"]), "confirm": true}}))
	}
	caller := &skillCaller{f: f, mreq: mreq, via: "skill:" + providerID + ":" + name, confirm: confirm}
	res, err := sk.RunSkill(ctx, name, rawOrEmpty(m["arguments"]), caller)
	if err != nil {
		if te, ok := toolerr.As(err); ok {
			return errorResult(te)
		}
		return errorResult(toolerr.New(toolerr.BackendError, "The skill failed; read the message before retrying.", "skill %q failed: %v", name, err))
	}
	if res != nil && res.IsError {
		return errorResult(pipeline.BackendError(res))
	}
	return render(&pipeline.Response{Result: res})
}

type skillCaller struct {
	f       *Facade
	mreq    *mcp.CallToolRequest
	via     string
	confirm bool
}

var _ provider.ToolCaller = (*skillCaller)(nil)

func (c *skillCaller) CallTool(ctx context.Context, canonical string, args json.RawMessage) (*provider.Result, error) {
	req := &pipeline.Request{Via: c.via, Tool: canonical, Args: args, Confirm: c.confirm, Shape: searchShape{}}
	c.f.bindSession(c.mreq, req)
	resp := c.f.run(ctx, req)
	if resp.Err != nil {
		return nil, resp.Err
	}
	return resp.Result, nil
}
