package pipeline

import (
	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/policy"
)

// Decisions are the confirmations a person made once for later calls
// ("always allow this tool", "allow for this session"). The Policy step
// consults them before asking, and records what the person chose.
// Implementations key by canonical name and must refuse a decision made
// for another provider's tool of the same name.
type Decisions interface {
	// Allowed reports whether a remembered decision confirms calling t in
	// session: the pipeline's scope of one caller's session (identity and
	// session id together), "" where there is none (stateless: then only
	// "always" decisions apply, and a "for this session" answer approves
	// the one call).
	Allowed(t catalog.Tool, session string) bool
	// Remember records a decision wider than one call (ApprovedForSession,
	// ApprovedAlways); others are ignored.
	Remember(t catalog.Tool, session string, a policy.Approval)
}
