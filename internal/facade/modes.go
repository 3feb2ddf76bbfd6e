package facade

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/text"
)

// The exposure modes are data: each is one row of the modes table below
// (its name, what initialize tells the model, the meta-tools it publishes
// and how a call of a name it does not list is taught), so the modes can be
// listed, snapshotted and documented (Modes, docs/modes.md) without a
// catalog, and the facade reads the row instead of switching on the mode.

// toolScope says how many of a meta-tool a mode publishes.
type toolScope int

const (
	// once: one per server.
	once toolScope = iota
	// onceWithSkills: one per server, when a provider in view has skills.
	onceWithSkills
	// perProvider: one per provider in view.
	perProvider
	// perProviderWithSkills: one per provider in view that has skills.
	perProviderWithSkills
)

func (s toolScope) String() string {
	return [...]string{"once", "once, when a provider has skills", "per provider with tools", "per provider with skills"}[s]
}

// metaTool is one tool a mode publishes: its name (per-provider names
// spell the prefix as <provider>), how many, and its definition with the
// handler (description, schema and annotations live with their handler in
// progressive.go, calls.go, skills.go, text.go and code.go).
type metaTool struct {
	name  string
	scope toolScope
	def   func(f *Facade, p registry.ProviderStatus) toolDef // p is the zero value for a tool of the server
}

// modeSpec is one exposure mode.
type modeSpec struct {
	mode    Mode
	summary string // one line for docs and error messages
	// instructions are the server's initialize instructions, which may
	// depend on how mutations are confirmed.
	instructions func(policy.ConfirmMode) string
	// tools are the meta-tools in the order tools/list shows them; a mode
	// that lists the catalog's tools themselves builds them in catalogTools.
	tools        []metaTool
	catalogTools func(f *Facade) []toolDef
	// unlisted are tools the row publishes callable by name but leaves out
	// of tools/list (grouped progressive's per-provider tools, views.go).
	unlisted []metaTool
	// grouped, when set, replaces this row above progressive.groupAbove
	// providers.
	grouped *modeSpec
	// help is agent_tools_help's description in this mode.
	help string
	// unknown is how a call of a name the server does not list is shown
	// back (its correct shape) and what the teaching error's hint says.
	unknown     pipeline.Shape
	unknownHint string
	// canonicalHits: discover and search name tools by their canonical
	// names (a call takes them so) rather than the provider's own names.
	canonicalHits bool
	// signatures: hits carry TypeScript signatures instead of parameters.
	signatures bool
	// readsText: a call's result is read as the runtime's rendering (text),
	// not the backend's content blocks.
	readsText bool
}

const listedHint = "Call one of the tools this server lists (tools/list)."

// modes is the table of exposure modes, in the order docs and messages
// list them; the first is the default. It is filled by init: its handlers
// read it back (specOf), which a variable's initializer may not.
var modes []*modeSpec

func init() { modes = modeTable() }

func modeTable() []*modeSpec {
	// progressive mode's per-provider tools, listed up to the threshold
	// and callable by name (unlisted) above it
	progressiveTools := []metaTool{
		{name: metaName("<provider>", "discover"), scope: perProvider, def: (*Facade).discoverDef},
		{name: metaName("<provider>", "call"), scope: perProvider, def: (*Facade).callDef},
		{name: metaName("<provider>", "run_skill"), scope: perProviderWithSkills, def: (*Facade).runSkillDef},
	}

	helpMeta := metaTool{name: helpTool, scope: once, def: server((*Facade).helpDef)}
	return []*modeSpec{
		{
			mode:    Progressive,
			summary: "help, then a discover and a call per provider (grouped behind one discover above progressive.groupAbove providers)",
			instructions: func(policy.ConfirmMode) string {
				return "Tools are grouped by provider. agent_tools_help lists the providers; agent_tools_<provider>_discover finds a provider's tools; agent_tools_<provider>_call calls one."
			},
			tools: append([]metaTool{helpMeta}, progressiveTools...),
			help:  "List the tool providers this server has loaded (prefix and one line each) and how to reach their tools. Call it first when you do not know which provider covers a task, or when a provider you are using lacks a capability.",
			grouped: &modeSpec{
				mode: Progressive,
				help: "List the tool providers this server has loaded, one line each. " + groupedDiscoverTool + " already searches all of them.",
				tools: []metaTool{
					helpMeta,
					{name: groupedDiscoverTool, scope: once, def: server((*Facade).groupedDiscoverDef)},
					{name: callTool, scope: once, def: server((*Facade).groupedCallDef)},
					{name: runSkillTool, scope: onceWithSkills, def: server((*Facade).groupedRunSkillDef)},
				},
				unlisted: progressiveTools,
			},
			unknown:     progressiveShape{},
			unknownHint: "Tools of a provider are called through agent_tools_<provider>_call({toolName, arguments}); agent_tools_help lists the providers.",
		},
		{
			mode:    Search,
			summary: "help, one search over every provider and one call by canonical name",
			instructions: func(policy.ConfirmMode) string {
				return "Tools are behind a search index: call agent_tools_search with what you need, then agent_tools_call with the tool name it returns. agent_tools_help lists the providers."
			},
			help: "List the tool providers this server has loaded (prefix and one line each). Use agent_tools_search to find a tool across all of them.",
			tools: []metaTool{
				helpMeta,
				{name: searchTool, scope: once, def: server((*Facade).searchDef)},
				{name: callTool, scope: once, def: server((*Facade).searchCallDef)},
				{name: runSkillTool, scope: onceWithSkills, def: server((*Facade).searchRunSkillDef)},
			},
			unknown: searchShape{}, unknownHint: listedHint, canonicalHits: true,
		},
		{
			mode:         Flat,
			summary:      "every tool listed directly under its canonical name",
			instructions: flatInstructions,
			catalogTools: (*Facade).flatTools,
			unknown:      flatShape{}, unknownHint: listedHint, canonicalHits: true,
		},
		{
			mode:    Text,
			summary: "one tool that takes a command line",
			instructions: func(policy.ConfirmMode) string {
				return "One tool, agent_tools_exec, takes a command line: start with `help`, then `<provider> discover <words>` and `<provider> call <tool> key=value`."
			},
			tools:   []metaTool{{name: execTool, scope: once, def: server((*Facade).textDef)}},
			unknown: textShape{}, unknownHint: listedHint, readsText: true,
		},
		{
			mode:    Code,
			summary: "help, search, and execute_javascript whose scripts call tools",
			instructions: func(policy.ConfirmMode) string {
				return "Write one execute_javascript script per task: in it, tools.search(query) finds tools (with TypeScript-style signatures), await tools.call(name, args) calls one, and only what the script returns comes back. agent_tools_search finds tools from outside a script; agent_tools_help lists the providers and the tools API."
			},
			help: "List the tool providers this server has loaded (prefix and one line each) and declare the `tools` object execute_javascript scripts call them through (TypeScript).",
			tools: []metaTool{
				helpMeta,
				{name: searchTool, scope: once, def: server((*Facade).codeSearchDef)},
				{name: codeTool, scope: once, def: server((*Facade).codeRunDef)},
			},
			unknown: flatShape{}, unknownHint: listedHint, canonicalHits: true, signatures: true,
		},
	}
}

func flatInstructions(confirm policy.ConfirmMode) string {
	switch confirm {
	case policy.ConfirmToken:
		return "Every tool is listed directly. A tool that changes state first answers CONFIRMATION_REQUIRED with a one-time confirm_token; if the user wants the change, repeat the exact call with agent_tools_confirm set to that token."
	case policy.ConfirmHuman:
		return "Every tool is listed directly. Tools that change state run only after a person approves them in the client."
	}
	return "Every tool is listed directly. Tools that change state need the argument agent_tools_confirm: true."
}

// server adapts a server-wide definition to metaTool.def.
func server(def func(*Facade) toolDef) func(*Facade, registry.ProviderStatus) toolDef {
	return func(f *Facade, _ registry.ProviderStatus) toolDef { return def(f) }
}

// specOf is the row of mode m (the default's for an unknown one).
func specOf(m Mode) *modeSpec {
	for _, s := range modes {
		if s.mode == m {
			return s
		}
	}
	return modes[0]
}

// ParseMode validates a mode name ("" is the default, progressive).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return modes[0].mode, nil
	}
	names := make([]string, len(modes))
	for i, m := range modes {
		if string(m.mode) == s {
			return m.mode, nil
		}
		names[i] = string(m.mode)
	}
	err := fmt.Sprintf("unknown mode %q (want %s or %s)", s, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
	if near := text.Suggestions(s, names, 1); len(near) > 0 {
		err += fmt.Sprintf("; did you mean %q?", near[0])
	}
	return "", errors.New(err)
}

// spec is the facade's row; progressive's grouped row above the threshold.
func (f *Facade) spec(provs []registry.ProviderStatus) *modeSpec {
	s := specOf(f.opts.Mode)
	if s.grouped != nil && f.grouped(provs) {
		return s.grouped
	}
	return s
}

// build makes the definitions a row calls for over the providers in view.
func (f *Facade) build(s *modeSpec, provs []registry.ProviderStatus) []toolDef {
	anySkills := false
	for _, p := range provs {
		anySkills = anySkills || len(p.Skills) > 0
	}
	var defs []toolDef
	for _, m := range s.tools {
		if m.scope == once || m.scope == onceWithSkills && anySkills {
			defs = append(defs, m.def(f, registry.ProviderStatus{}))
		}
	}
	for _, p := range provs {
		// An empty provider's own tools answer by name, unlisted
		// (progressive.go): they would cost the list and find nothing.
		defs = f.perProvider(defs, s.tools, p, s.mode == Progressive && f.empty(p))
		defs = f.perProvider(defs, s.unlisted, p, true)
	}
	if s.catalogTools != nil {
		defs = append(defs, s.catalogTools(f)...)
	}
	return defs
}

// perProvider appends p's tools of ms, owned by p (hidden with it, views.go).
func (f *Facade) perProvider(defs []toolDef, ms []metaTool, p registry.ProviderStatus, unlisted bool) []toolDef {
	for _, m := range ms {
		if m.scope == perProvider || m.scope == perProviderWithSkills && len(p.Skills) > 0 {
			d := m.def(f, p)
			d.owner = owner{provider: p.Info.ID, unlisted: unlisted}
			defs = append(defs, d)
		}
	}
	return defs
}

// ModeInfo documents one exposure mode: its name, a line on what it
// publishes, its initialize instructions (for the default confirmation)
// and its meta-tools.
type ModeInfo struct {
	Mode         Mode
	Summary      string
	Instructions string
	Tools        []MetaToolInfo
	// Grouped are the tools listed instead above progressive.groupAbove
	// providers (progressive only).
	Grouped []MetaToolInfo
}

// MetaToolInfo is one meta-tool of a mode: its name (<provider> stands for
// a provider's prefix) and how many the mode publishes.
type MetaToolInfo struct {
	Name  string
	Scope string
}

// Modes lists the exposure modes from the table, in order, the default first.
func Modes() []ModeInfo {
	out := make([]ModeInfo, 0, len(modes))
	for _, m := range modes {
		mi := ModeInfo{Mode: m.mode, Summary: m.summary, Instructions: m.instructions(policy.ConfirmAgent), Tools: toolInfos(m.tools)}
		if m.grouped != nil {
			mi.Grouped = toolInfos(m.grouped.tools)
		}
		out = append(out, mi)
	}
	return out
}

func toolInfos(ts []metaTool) []MetaToolInfo {
	out := make([]MetaToolInfo, len(ts))
	for i, t := range ts {
		out[i] = MetaToolInfo{Name: t.name, Scope: t.scope.String()}
	}
	return out
}
