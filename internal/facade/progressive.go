package facade

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strconv"
	"strings"

	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

const (
	helpTool      = "agent_tools_help"
	searchTool    = "agent_tools_search"
	callTool      = "agent_tools_call"
	runSkillTool  = "agent_tools_run_skill"
	listPageSize  = 50
	queryHelp     = "The capability you need, in a few words (\"weather forecast for a city\"), not the user's whole request; one query per step of a longer task."
	maxHits       = 50
	schemaHits    = 3 // top hits that carry their full input schema
	descLen       = 200
	namesInDescMx = 12
)

func metaName(id, verb string) string { return "agent_tools_" + id + "_" + verb }

func (f *Facade) progressiveTools() []toolDef {
	defs := []toolDef{f.helpDef()}
	for _, p := range f.visibleProviders() {
		start := len(defs)
		defs = append(defs, f.discoverDef(p), f.callDef(p))
		if len(p.Skills) > 0 {
			defs = append(defs, f.runSkillDef(p))
		}
		for i := start; i < len(defs); i++ {
			defs[i].owner = owner{provider: p.Info.ID} // views.go: hidden with the provider
		}
	}
	return defs
}

func (f *Facade) helpDef() toolDef {
	desc := "List the tool providers this server has loaded (prefix and one line each) and how to reach their tools. Call it first when you do not know which provider covers a task, or when a provider you are using lacks a capability."
	switch f.opts.Mode {
	case Search:
		desc = "List the tool providers this server has loaded (prefix and one line each). Use agent_tools_search to find a tool across all of them."
	case Code:
		desc = "List the tool providers this server has loaded (prefix and one line each) and declare the `tools` object execute_javascript scripts call them through (TypeScript)."
	}
	return toolDef{
		tool: &sdk.Tool{
			Name: helpTool, Description: desc,
			InputSchema: objectSchema(nil, nil),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "List tool providers"},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if _, e := decodeArgs(req.Params.Arguments, helpTool); e != nil {
				return errorResult(e), nil
			}
			f.cat.Refresh(ctx)
			return jsonResult(f.help(f.grantOf(req.Extra))), nil
		},
	}
}

type providerLine struct {
	Prefix      string   `json:"prefix"`
	Description string   `json:"description"`
	Tools       int      `json:"tools"`
	Skills      []string `json:"skills,omitempty"`
	Discover    string   `json:"discover,omitempty"`
	Call        string   `json:"call,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// help lists the providers with what the caller (its grant g, nil for no
// per-identity rules) can see of each: tool counts and skills.
func (f *Facade) help(g *policy.Grant) map[string]any {
	var lines []providerLine
	for _, p := range f.visibleProviders() {
		l := providerLine{Prefix: p.Info.ID, Description: firstLine(p.Info.Description, descLen), Tools: len(f.visibleToolsTo(g, p.Info.ID))}
		for _, s := range p.Skills {
			if g == nil || f.skillVisibleTo(g, p.Info, s.Name) {
				l.Skills = append(l.Skills, s.Name)
			}
		}
		if f.opts.Mode == Progressive {
			l.Discover, l.Call = metaName(p.Info.ID, "discover"), metaName(p.Info.ID, "call")
		}
		if p.Err != nil {
			l.Error = p.Err.Error()
		}
		lines = append(lines, l)
	}
	next := "Call agent_tools_<prefix>_discover with a query to find a tool, then agent_tools_<prefix>_call({toolName, arguments})."
	switch f.opts.Mode {
	case Search:
		next = "Call agent_tools_search({query}) to find a tool, then agent_tools_call({tool, arguments})."
	case Flat:
		next = "Every tool is listed directly under its own name."
	case Code:
		next = "Write one " + codeTool + " script: find tools with tools.search(query), call them with await tools.call(name, args) (Promise.all for independent calls), and return only what the answer needs."
		return map[string]any{"providers": lines, "api": codeAPI, "next": next}
	case Text:
		next = "Run `<prefix> discover <words>` to find a provider's tools, then `<prefix> call <tool> key=value`; `search <words>` looks in every provider; `call <canonical-name> key=value` calls a tool by the name search returns."
		return map[string]any{"providers": lines, "commands": textUsage, "next": next}
	}
	return map[string]any{"providers": lines, "next": next}
}

func (f *Facade) discoverDef(p registry.ProviderStatus) toolDef {
	id := p.Info.ID
	name := metaName(id, "discover")
	desc := fmt.Sprintf("Find tools of provider %q: %s. With `query` (the capability you need, e.g. \"weather forecast for a city\", not the user's whole task) it returns the best-matching tools and skills with their arguments and why each matched; without, it lists all tools (`cursor` pages). Then call %s.",
		id, strings.TrimSuffix(firstLine(p.Info.Description, descLen), "."), metaName(id, "call"))
	if hint := strings.TrimSpace(p.Info.DiscoverHint); hint != "" {
		desc += " " + hint
	}
	desc += " Other providers: " + helpTool + "."
	return toolDef{
		tool: &sdk.Tool{
			Name: name, Description: desc,
			InputSchema: objectSchema(map[string]any{
				"query":   prop("string", queryHelp+" Omit to list all tools."),
				"limit":   map[string]any{"type": "integer", "minimum": 1, "maximum": maxHits, "description": fmt.Sprintf("How many results (1–%d).", maxHits)},
				"cursor":  prop("string", "next_cursor of the previous page."),
				"schemas": prop("boolean", "Full input schema for every result, not only the top hits."),
			}, nil),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Find " + id + " tools"},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return f.discover(ctx, f.grantOf(req.Extra), id, name, req.Params.Arguments), nil
		},
	}
}

type discoverArgs struct {
	Query   string
	Limit   int
	Cursor  string
	Schemas bool
}

func parseDiscover(raw json.RawMessage, via string, extra ...string) (discoverArgs, map[string]json.RawMessage, *toolerr.Error) {
	var a discoverArgs
	m, e := decodeArgs(raw, via, append([]string{"query", "limit", "cursor", "schemas"}, extra...)...)
	if e != nil {
		return a, nil, e
	}
	for _, fe := range []*toolerr.Error{field(m, "query", via, &a.Query), field(m, "limit", via, &a.Limit),
		field(m, "cursor", via, &a.Cursor), field(m, "schemas", via, &a.Schemas)} {
		if fe != nil {
			return a, nil, fe
		}
	}
	// One limit everywhere (schema, hint, validation): 1–maxHits.
	if raw, given := m["limit"]; (given && string(raw) != "null" && a.Limit < 1) || a.Limit > maxHits {
		return a, nil, toolerr.New(toolerr.InvalidArguments, fmt.Sprintf("Use a limit between 1 and %d.", maxHits),
			"%s: limit %d is out of range", via, a.Limit)
	}
	a.Query = strings.TrimSpace(a.Query)
	return a, m, nil
}

func (f *Facade) discover(ctx context.Context, g *policy.Grant, id, via string, raw json.RawMessage) *sdk.CallToolResult {
	a, _, e := parseDiscover(raw, via)
	if e != nil {
		return errorResult(e)
	}
	f.cat.Refresh(ctx)
	if e := f.unavailable(id); e != nil { // miss.go: a dead upstream is not an empty one
		return errorResult(e)
	}
	if a.Query == "" {
		return f.listPage(g, id, via, a)
	}
	return jsonResult(f.rank(g, a, index.Options{Provider: id}, metaName(id, "call")))
}

func (f *Facade) listPage(g *policy.Grant, id, via string, a discoverArgs) *sdk.CallToolResult {
	tools := f.visibleToolsTo(g, id)
	start := 0
	if a.Cursor != "" {
		n, err := strconv.Atoi(a.Cursor)
		if err != nil || n < 0 || n > len(tools) {
			return errorResult(toolerr.New(toolerr.InvalidArguments, "Pass the next_cursor value of the previous page unchanged, or omit cursor.",
				"%s: invalid cursor %q", via, a.Cursor))
		}
		start = n
	}
	limit := a.Limit
	if limit == 0 {
		limit = listPageSize
	}
	end := min(start+limit, len(tools))
	page := make([]hit, 0, end-start)
	for _, t := range tools[start:end] {
		page = append(page, toolHit(t, a.Schemas, f.opts.Mode))
	}
	out := map[string]any{"provider": id, "total": len(tools), "tools": page,
		"next": "Call " + metaName(id, "call") + "({toolName, arguments}) with a name from this list."}
	if end < len(tools) {
		// Said in "next" too: a model reads the instruction, not every key.
		out["next_cursor"] = strconv.Itoa(end)
		out["next"] = fmt.Sprintf("This page shows tools %d-%d of %d; for more, call %s again with cursor %q, or with a query to rank them. ",
			start+1, end, len(tools), via, strconv.Itoa(end)) + out["next"].(string)
	}
	return jsonResult(out)
}
