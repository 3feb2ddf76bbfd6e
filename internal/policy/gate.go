package policy

import (
	"slices"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// The gate is the runtime's one access decision: who may see and do what.
// Every door a request can come through (MCP tools/call in every mode, a
// script's tools.*, a skill's calls, passthrough resources, prompts,
// completions and subscriptions, the console's pages and API, the CLI's
// `call`, the public Session) builds a Caller and a Target and asks
// Gate.Decide; none of them decides on its own. The order of the checks is
// the order of Decide's body (docs/architecture.md, "The gate").

// Door is where a request came in. It is data for the decision (a script
// door may be read-only) and for the audit.
type Door string

// The doors. A new door is added here and to Doors, and the gate's matrix
// test (internal/tests/gate) then runs it against every restriction.
const (
	DoorMCP         Door = "mcp"         // tools/call of any exposure mode
	DoorScript      Door = "script"      // execute_javascript's tools.search/describe/call
	DoorSkill       Door = "skill"       // the tool calls a skill makes
	DoorPassthrough Door = "passthrough" // resources, prompts, completions, subscriptions
	DoorConsole     Door = "console"     // the console's pages and JSON API
	DoorCLI         Door = "cli"         // `agent-tools call`
	DoorSession     Door = "session"     // the public package's Session
)

// Doors lists every door, in the order the docs name them.
var Doors = []Door{DoorMCP, DoorScript, DoorSkill, DoorPassthrough, DoorConsole, DoorCLI, DoorSession}

// Caller is who is asking, and through which door: one value that travels
// with the request from the door to every stage of the pipeline.
type Caller struct {
	// Identity is who the caller authenticated as ("token:<name>",
	// "oidc:<issuer>|<subject>", "process:<pid>" on stdio, "console:local"
	// for the console's login link; never a token).
	Identity string
	// Claims are the verified token claims per-identity rules match on.
	Claims Claims
	// Profile is the profile (view) the request came through; "" is the
	// default endpoint.
	Profile string
	// Session is the client's session id ("" when stateless: then nothing
	// is remembered "for this session").
	Session string
	// Client is the client's name from initialize, for the audit.
	Client string
	// Door is where the request came in.
	Door Door
	// ReadOnly is set by a door that may not change state (a script run
	// without code.allowMutations): a call of a tool that is not read-only
	// is refused, on the tool the pipeline resolved.
	ReadOnly bool
	// Run is the request id of the script run a call is made from ("" for
	// a call the model made itself): a confirmation token goes back to the
	// model, never to the script that caused it.
	Run string
	// Interactive: a person is at this door, not an agent: a console
	// session logged in with its cookie (and answering with its CSRF
	// token), or the CLI at a terminal. Only an interactive caller can
	// approve (Approve): a bearer token is also an MCP credential, so a
	// request made with one may be the agent's own.
	Interactive bool
}

// Action is what the caller asks to do with the target.
type Action int

const (
	// See: list, search, describe. Hidden targets are left out.
	See Action = iota
	// Call: run a tool or a skill, read a resource, get a prompt,
	// complete, subscribe.
	Call
	// Approve: decide a call waiting for a person (the console's
	// Approvals page) or approve a pinned definition.
	Approve
	// Administer: switch providers, restart them, log them in upstream,
	// read every identity's audit, list every tool with its schema.
	Administer
)

func (a Action) String() string {
	switch a {
	case See:
		return "see"
	case Call:
		return "call"
	case Approve:
		return "approve"
	case Administer:
		return "administer"
	}
	return "unknown"
}

// TargetKind says what a Target names.
type TargetKind int

const (
	// ToolTarget is a catalog tool (Canonical is its canonical name).
	ToolTarget TargetKind = iota
	// SkillTarget is a skill (Canonical is its canonical run name).
	SkillTarget
	// OpTarget is a forwarded request that is no tool call: a resource
	// (Canonical is its URI), a prompt (its published name), a completion
	// (the prompt's name or the resource's URI it completes), a
	// subscription. It is decided as a tool is: by every allow and deny
	// list, default-closed wherever an allow list exists.
	OpTarget
	// AdminTarget is the runtime itself (console routes, pins, providers).
	AdminTarget
)

// Target is what is asked for.
type Target struct {
	Kind      TargetKind
	Provider  string
	Canonical string
	// Digest is the tool's definition digest (catalog.Definition.Digest),
	// for approvals remembered against one definition.
	Digest string
	// Mutates: the call changes state (not read-only, as the pipeline
	// worked it out for the resolved tool and these arguments).
	Mutates bool
	// Quarantined: the definition changed since it was pinned, or a
	// scanner holds it; it waits for a person's approval.
	Quarantined bool
	// ModeTool: the exposure mode's own tool (code mode's interpreter),
	// which is part of every view of that mode.
	ModeTool bool
	// SessionOp: an OpTarget that only sets this client's own session
	// (logging/setLevel): it names nothing upstream, so no allow list
	// concerns it; a deny list that names its method still does.
	SessionOp bool
}

// Verdict is the gate's answer.
type Verdict int

const (
	// Allow: go on (a mutating call still needs its confirmation, by
	// Decision.Confirm).
	Allow Verdict = iota
	// Hide: the caller may not see the target; it answers exactly as a
	// target that does not exist (UNKNOWN_TOOL, a missing resource), so
	// nothing about it leaks, not even its schema.
	Hide
	// Deny: the caller sees the target but may not do this; Err teaches.
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Hide:
		return "hide"
	case Deny:
		return "deny"
	}
	return "unknown"
}

// Decision is the gate's answer to one question.
type Decision struct {
	Verdict Verdict
	// Err is the teaching error of a Deny.
	Err *toolerr.Error
	// Confirm is who must confirm a mutating call that is allowed: the
	// first matching identity rule's mode, else the global one. "human"
	// means a person is asked (elicitation or the console's Approvals).
	Confirm ConfirmMode
}

// Allowed reports whether the verdict is Allow.
func (d Decision) Allowed() bool { return d.Verdict == Allow }

// Gate holds what the decision is made from, compiled once per
// configuration: the global allow/deny rules, the profiles and
// per-identity rules, and who may administer.
type Gate struct {
	rules  Rules
	access *Access
	// operators are identity globs that may administer; nil = the default
	// (identities no per-identity rule restricts, and the console's login
	// link).
	operators []string
}

// NewGate compiles a gate. access may be nil (no profiles, no rules);
// operators nil means the default operator role.
func NewGate(rules Rules, access *Access, operators []string) *Gate {
	return &Gate{rules: rules, access: access, operators: slices.Clone(operators)}
}

// Rules are the gate's global rules.
func (g *Gate) Rules() Rules {
	if g == nil {
		return Rules{}
	}
	return g.rules
}

// Access is the gate's profiles and per-identity rules (nil: none).
func (g *Gate) Access() *Access {
	if g == nil {
		return nil
	}
	return g.access
}

// ConsoleIdentity is who logged in to the console with the one-time link
// printed at start: the person who started the server, an operator.
const ConsoleIdentity = "console:local"

// Decide is the access decision. In order:
//
//  1. Administer: an operator (Operator) may; nobody else.
//  2. Approve: an interactive operator (a person, not a credential an
//     agent also holds) who may also call the target (a person approves
//     only what they could do themselves).
//  3. The mode's own tool (ModeTool) is in every view; global rules still
//     apply to it.
//  4. Global deny/allow, the profile's view, the caller's identity rules:
//     outside any of them the target is hidden (as if it did not exist).
//     A forwarded request (OpTarget) is decided by the same lists as a
//     tool, by its canonical name: a non-empty allow list is exhaustive
//     for resources, prompts and completions as it is for tools.
//  5. See stops here: a visible target is listed (a quarantined one too,
//     so a person can find and approve it).
//  6. Quarantine: DENIED with the approve command.
//  7. A read-only door: a mutating call is DENIED.
//  8. Allow, with the confirm mode that applies to this caller.
func (g *Gate) Decide(c *Caller, a Action, t Target) Decision {
	switch a {
	case Administer:
		if g.Operator(c) {
			return Decision{Verdict: Allow}
		}
		return Decision{Verdict: Deny, Err: toolerr.New(toolerr.Denied,
			"Only an operator can do this: ask one, or add your identity to policy.operators.",
			"%s is not an operator of this server", c.Identity)}
	case Approve:
		if !g.Operator(c) {
			return Decision{Verdict: Deny, Err: toolerr.New(toolerr.Denied,
				"Only an operator can approve: ask one, or add your identity to policy.operators.",
				"%s is not an operator of this server", c.Identity)}
		}
		if !c.Interactive {
			return Decision{Verdict: Deny, Err: toolerr.New(toolerr.Denied,
				"A person approves in the console, logged in through its link or single sign-on, or at the terminal with `agent-tools call --confirm`; a bearer token is an agent's credential and cannot approve. Tell the user what is waiting; do not retry.",
				"%s did not come through an interactive session, so cannot give a person's approval", c.Identity).With("reason", "not_interactive")}
		}
		if t.Kind == AdminTarget {
			return Decision{Verdict: Allow}
		}
		as := *c
		as.ReadOnly = false
		if d := g.Decide(&as, Call, Target{Kind: t.Kind, Provider: t.Provider, Canonical: t.Canonical, ModeTool: t.ModeTool}); d.Verdict != Allow {
			return Decision{Verdict: Deny, Err: toolerr.New(toolerr.Denied,
				"A person may approve only a call they could make themselves; ask an operator who may call this tool.",
				"%s may not call %q, so may not approve it", c.Identity, t.Canonical)}
		}
		return Decision{Verdict: Allow}
	}
	if !g.visible(c, t) {
		return Decision{Verdict: Hide}
	}
	if a == See {
		return Decision{Verdict: Allow}
	}
	if t.Quarantined {
		return Decision{Verdict: Deny, Err: quarantined(t)}
	}
	if c.ReadOnly && t.Mutates {
		return Decision{Verdict: Deny, Err: toolerr.New(toolerr.Denied,
			"Scripts here may only call read-only tools (code.allowMutations is off): return what you found and ask the user to make the change, or call the tool directly.",
			"%q changes state and this script runs read-only", t.Canonical).With("reason", "read_only_script")}
	}
	mode := g.rules.Confirm
	if !g.access.Empty() {
		mode = g.access.For(c.Identity, c.Claims, c.Profile).Confirm(mode)
	}
	return Decision{Verdict: Allow, Confirm: mode}
}

// visible is step 4 of Decide: whether the target exists for this caller.
func (g *Gate) visible(c *Caller, t Target) bool {
	if t.SessionOp {
		// Only deny lists can name a session's own setting.
		if _, denied := firstMatch(g.rules.Deny, t.Canonical); denied {
			return false
		}
		if !g.access.Empty() {
			for _, r := range g.access.For(c.Identity, c.Claims, c.Profile).rules {
				if _, denied := firstMatch(r.Deny, t.Canonical); denied {
					return false
				}
			}
		}
		return true
	}
	if g.rules.check(t.Canonical) != nil {
		return false
	}
	if g.access.Empty() || t.ModeTool {
		return true
	}
	return g.access.For(c.Identity, c.Claims, c.Profile).Visible(t.Provider, t.Canonical)
}

// Operator reports whether the caller may administer the server: an
// identity matching policy.operators when it is set; otherwise the
// console's login link and every identity that no per-identity rule
// restricts (no rule that matches it allows or denies anything), coming
// through the default endpoint.
func (g *Gate) Operator(c *Caller) bool {
	if c == nil || c.Identity == "" {
		return false
	}
	if g != nil && g.operators != nil {
		_, ok := firstMatch(g.operators, c.Identity)
		return ok
	}
	if c.Identity == ConsoleIdentity {
		return true
	}
	if g == nil || g.access == nil {
		return true
	}
	gr := g.access.For(c.Identity, c.Claims, "")
	for _, r := range gr.rules {
		if len(r.Allow) > 0 || len(r.Deny) > 0 {
			return false
		}
	}
	return true
}

// quarantined is the teaching error of a held definition.
func quarantined(t Target) *toolerr.Error {
	return toolerr.New(toolerr.Denied,
		"A person must approve the new definition first: in the console's pins view, or with `agent-tools pins approve "+t.Canonical+"`. Tell the user; do not retry.",
		"tool %q is quarantined: its definition changed since it was pinned", t.Canonical)
}
