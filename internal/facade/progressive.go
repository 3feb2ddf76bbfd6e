package facade

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/catalog"
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

// DefaultGroupAbove is how many providers progressive mode gives their own
// discover and call; above it, they are grouped behind one discover and
// one call (progressive.groupAbove in the config). Measured on the data
// sets' providers (go run ./bench/contextcost --group-sweep): each
// provider's discover and call cost ~410–500 tokens of tools/list, four
// 1,772–1,972 and six 2,603–2,914, against a goal of 2,000 at any size;
// the grouped list costs 456–491 tokens whatever the catalog's size.
const DefaultGroupAbove = 4

// groupedDiscoverTool finds tools across every provider when they are grouped.
const groupedDiscoverTool = "agent_tools_discover"

// helpDescLen bounds a provider's description in help when grouped: one
// short line per provider, so help stays readable at a hundred of them.
const helpDescLen = 80

// namesInDescChars bounds the tool names a provider's call tool lists in
// its description (besides namesInDescMx).
const namesInDescChars = 120

// groupAboveer is a catalog that says the configured threshold (the app's
// live config); 0 means DefaultGroupAbove, a negative value never groups.
type groupAboveer interface{ ProgressiveGroupAbove() int }

// listBudget is the default mode's tools/list budget, in estimated tokens
// (estimateTokens). Under the default threshold progressive mode also
// groups fewer providers when their own tools would pass it (a few
// providers with long descriptions and skills: four of 620 tokens each),
// so its list stays under 2,000 tokens at any catalog size
// (bench/contextcost's TestDefaultModeListBounded).
const listBudget = 1800

// grouped reports whether progressive mode groups the providers provs now.
func (f *Facade) grouped(provs []registry.ProviderStatus) bool {
	if f.opts.Mode != Progressive {
		return false
	}
	n, auto := DefaultGroupAbove, true
	if g, ok := f.cat.(groupAboveer); ok {
		if v := g.ProgressiveGroupAbove(); v < 0 {
			return false
		} else if v > 0 {
			n, auto = v, false // the operator's threshold, whatever the list costs
		}
	}
	provs = f.listedProviders(provs)
	if len(provs) > n {
		return true
	}
	return auto && f.ungroupedTokens(provs) > listBudget
}

// empty reports whether progressive mode lists no discover or call for p: it
// listed fine and has nothing a caller could find (no tool policy shows, no
// skill), such as a .agents/tools directory with no script yet. Its tools
// still answer by name, help still names it, and it does not count towards
// progressive.groupAbove. A provider still starting or failing is not
// empty: its tools are on their way, and its discover says what is wrong.
func (f *Facade) empty(p registry.ProviderStatus) bool {
	return p.Listed && p.Err == nil && len(p.Skills) == 0 && f.visibleCount(nil, p) == 0
}

// listedProviders are provs but the empty ones: the providers progressive
// mode lists a discover and a call for.
func (f *Facade) listedProviders(provs []registry.ProviderStatus) []registry.ProviderStatus {
	out := provs[:0:0]
	for _, p := range provs {
		if !f.empty(p) {
			out = append(out, p)
		}
	}
	return out
}

// helpTokens is about what agent_tools_help costs in tools/list.
const helpTokens = 120

// ungroupedTokens estimates progressive mode's tools/list with a discover,
// a call (and a run_skill) for each of provs.
func (f *Facade) ungroupedTokens(provs []registry.ProviderStatus) int {
	total := helpTokens
	var own []metaTool // help is helpTokens: building it asks this very question
	for _, m := range specOf(Progressive).tools {
		if m.scope == perProvider || m.scope == perProviderWithSkills {
			own = append(own, m)
		}
	}
	for _, d := range f.build(&modeSpec{tools: own}, provs) {
		b, _ := json.Marshal(d.tool)
		total += estimateTokens(b)
	}
	return total
}

// estimateTokens over-estimates what a BPE tokenizer (o200k_base) makes of
// b: a token per 3.5 bytes of ASCII (JSON and English run 4.3), one per
// other character (CJK runs below one).
func estimateTokens(b []byte) int {
	ascii, other := 0, 0
	for _, r := range string(b) {
		if r < utf8.RuneSelf {
			ascii++
		} else {
			other++
		}
	}
	return ascii*2/7 + other
}

func (f *Facade) helpDef() toolDef {
	desc := f.spec(f.visibleProviders()).help // modes.go
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
	provs := f.visibleProviders()
	if f.grouped(provs) {
		return f.groupedHelp(g, provs)
	}
	for _, p := range provs {
		l := providerLine{Prefix: p.Info.ID, Description: firstLine(p.Info.Description, descLen), Tools: f.visibleCount(g, p)}
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
	start, end, e := pageBounds(len(tools), a, via)
	if e != nil {
		return errorResult(e)
	}
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

// groupedRunSkillDef is grouped progressive mode's run_skill: search
// mode's, pointing at the grouped discover.
func (f *Facade) groupedRunSkillDef() toolDef {
	d := f.searchRunSkillDef()
	d.tool.Description = strings.ReplaceAll(d.tool.Description, searchTool, groupedDiscoverTool)
	return d
}

// groupedHelp names every provider in one short line: prefix, what it is,
// how many tools (and its skills, or why it is unavailable).
func (f *Facade) groupedHelp(g *policy.Grant, provs []registry.ProviderStatus) map[string]any {
	lines := make([]string, 0, len(provs))
	for _, p := range provs {
		d := p.Info.Description
		if i := strings.Index(d, ". "); i > 0 {
			d = d[:i] // the first sentence
		}
		l := fmt.Sprintf("%s: %s (%d tools)", p.Info.ID, strings.TrimSuffix(firstLine(d, helpDescLen), "."), f.visibleCount(g, p))
		var skills []string
		for _, s := range p.Skills {
			if g == nil || f.skillVisibleTo(g, p.Info, s.Name) {
				skills = append(skills, s.Name)
			}
		}
		if len(skills) > 0 {
			l += "; skills: " + strings.Join(skills, ", ")
		}
		if p.Err != nil {
			l += "; error: " + p.Err.Error()
		}
		lines = append(lines, l)
	}
	return map[string]any{"providers": lines,
		"next": "Call " + groupedDiscoverTool + "({query}) to find a tool in every provider (add provider to look in one, or give only provider to list its tools), then " + callTool + "({toolName, arguments}) with the name it returns."}
}

func (f *Facade) groupedDiscoverDef() toolDef {
	return toolDef{
		tool: &sdk.Tool{
			Name: groupedDiscoverTool,
			Description: "Find tools and skills in every provider by the capability you need (\"weather forecast for a city\", not the user's whole task; one query per step). Returns the best matches with their exact names, arguments and why each matched; then call " +
				callTool + ". " + helpTool + " names the providers; `provider` looks in one, and without a query lists its tools (`cursor` pages).",
			InputSchema: objectSchema(map[string]any{
				"query":    prop("string", "The capability you need, in a few words."),
				"provider": prop("string", "Only this provider (a prefix from "+helpTool+")."),
				"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": maxHits},
				"cursor":   prop("string", "next_cursor of the previous page."),
				"schemas":  prop("boolean", "Full input schema for every result."),
			}, nil),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Find tools"},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return f.groupedDiscover(ctx, f.grantOf(req.Extra), req.Params.Arguments), nil
		},
	}
}

// groupedCallDef is search mode's call (a canonical name; toolName is
// accepted as well as tool), described for grouped progressive mode.
func (f *Facade) groupedCallDef() toolDef {
	d := f.searchCallDef()
	t := *d.tool
	t.Description = "Call a tool by the exact name " + groupedDiscoverTool + " returned: {tool, arguments, confirm?}. Tools that change state need confirm: true, set only when the user wants that change."
	d.tool = &t
	return d
}

func (f *Facade) groupedDiscover(ctx context.Context, g *policy.Grant, raw json.RawMessage) *sdk.CallToolResult {
	const via = groupedDiscoverTool
	a, m, e := parseDiscover(raw, via, "provider")
	var prov string
	if e == nil {
		e = field(m, "provider", via, &prov)
	}
	prov = strings.TrimSpace(prov)
	if e == nil && a.Query == "" && prov == "" {
		e = toolerr.New(toolerr.InvalidArguments, "Describe what you want to do in `query`, e.g. {\"query\": \"list open pull requests\"}, or give a `provider` from "+helpTool+" to list its tools.",
			"%s needs a query or a provider", via)
	}
	if e != nil {
		return errorResult(e)
	}
	f.cat.Refresh(ctx)
	if prov != "" {
		if _, _, ok := f.cat.Provider(prov); !ok || !f.providerInView(prov) {
			return errorResult(toolerr.New(toolerr.ProviderUnavailable, "Call "+helpTool+" for the loaded providers.",
				"provider %q is not loaded", prov))
		}
		if e := f.unavailable(prov); e != nil {
			return errorResult(e)
		}
	}
	if a.Query == "" {
		return f.groupedList(g, prov, a)
	}
	out := f.rank(g, a, indexOptions(prov), callTool)
	rs, _ := out["results"].([]hit)
	for i := range rs {
		if rs[i].Kind == "skill" {
			rs[i].Name = rs[i].Provider + ":" + rs[i].Name
		} else if t, ok := f.toolNamed(rs[i].Provider, rs[i].Name); ok {
			rs[i].Name = t.Canonical
		}
	}
	if len(rs) > 0 && rs[0].Kind == "skill" {
		out["next"] = "The best result is a skill: run it with " + runSkillTool + "({skill: \"" + rs[0].Name + "\", arguments}). Tools are called with " + callTool + "."
	}
	return jsonResult(out)
}

// toolNamed is a provider's tool by its own name.
func (f *Facade) toolNamed(provider, name string) (catalog.Tool, bool) {
	for _, t := range f.visibleTools(provider) {
		if t.Name == name {
			return t, true
		}
	}
	return catalog.Tool{}, false
}

// pageBounds is the page of n listed tools a discover's cursor and limit
// ask for, or the teaching error of a cursor that is not one this server
// gave.
func pageBounds(n int, a discoverArgs, via string) (start, end int, e *toolerr.Error) {
	if a.Cursor != "" {
		c, err := strconv.Atoi(a.Cursor)
		if err != nil || c < 0 || c > n {
			return 0, 0, toolerr.New(toolerr.InvalidArguments, "Pass the next_cursor value of the previous page unchanged, or omit cursor.",
				"%s: invalid cursor %q", via, a.Cursor)
		}
		start = c
	}
	limit := a.Limit
	if limit == 0 {
		limit = listPageSize
	}
	return start, min(start+limit, n), nil
}

// groupedList pages through one provider's tools, by canonical name.
func (f *Facade) groupedList(g *policy.Grant, id string, a discoverArgs) *sdk.CallToolResult {
	const via = groupedDiscoverTool
	tools := f.visibleToolsTo(g, id)
	start, end, e := pageBounds(len(tools), a, via)
	if e != nil {
		return errorResult(e)
	}
	page := make([]hit, 0, end-start)
	for _, t := range tools[start:end] {
		h := toolHit(t, a.Schemas, f.opts.Mode)
		h.Name = t.Canonical
		page = append(page, h)
	}
	out := map[string]any{"provider": id, "total": len(tools), "tools": page,
		"next": "Call " + callTool + "({tool, arguments}) with a name from this list."}
	if end < len(tools) {
		out["next_cursor"] = strconv.Itoa(end)
		out["next"] = fmt.Sprintf("This page shows tools %d-%d of %d; for more, call %s again with provider %q and cursor %q, or with a query to rank them. ",
			start+1, end, len(tools), via, id, strconv.Itoa(end)) + out["next"].(string)
	}
	return jsonResult(out)
}
