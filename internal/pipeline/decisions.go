package pipeline

import (
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/policy"
)

// Decisions are the confirmations a person made once for later calls
// ("always allow this tool", "allow for this session"). The Policy step
// consults them before asking, and records what the person chose.
//
// A decision holds only in the scope it was given for: the caller's
// identity (DecisionScope.Identity) — never another caller's, whichever
// rule applies to either — plus, for "for this session", the session; the
// tool's canonical name and the provider that owned it; and the tool's
// definition digest (catalog.Tool.Digest), so that a changed definition
// asks again. Implementations key by canonical name (never an original
// name or an alias) and must refuse a decision made for another
// identity, another provider's tool of the same name, or another
// definition.
type Decisions interface {
	// Allowed reports whether a remembered decision confirms calling t in
	// scope: one for this identity and session, or an "always" for this
	// identity.
	Allowed(t catalog.Tool, scope DecisionScope) bool
	// Remember records a decision wider than one call (ApprovedForSession,
	// ApprovedAlways) for scope; others are ignored.
	Remember(t catalog.Tool, scope DecisionScope, a policy.Approval)
}

// DecisionScope is whom a remembered decision is for: the caller the
// person approved a call of, never the person who approved it.
type DecisionScope struct {
	// Identity is the caller's authenticated identity (req.Identity);
	// nothing is remembered, or applied, without one.
	Identity string
	// Session is the caller's session id, "" where there is none
	// (stateless: only "always" decisions apply, and a "for this
	// session" answer approves the one call).
	Session string
}

// decisionScope is the scope of req's caller.
func decisionScope(req *Request) DecisionScope {
	return DecisionScope{Identity: req.Identity, Session: req.Session}
}
