package console

import (
	"strings"

	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// routeAction is what a console route asks the gate before it runs.
type routeAction int

const (
	// loggedIn: any login; what the route does is decided further in (a
	// call by the pipeline's gate, as for every door).
	loggedIn routeAction = iota
	// administer: the gate's Administer (an operator).
	administer
	// approveEach: an operator here; each approval is then decided on
	// its call by the gate's Approve (apiAnswer).
	approveEach
)

// policyCaller is the console caller as the gate sees it.
func (w caller) policyCaller() *policy.Caller {
	// A person's cookie login (the one-time link, or a console-only token:
	// its mutations carry the session's CSRF token, api checks it) is a
	// person in a browser; a bearer token, or a session opened with one, is
	// also an MCP credential, so what it sends may be the agent's own: it
	// is never a person's approval (policy.Gate.Decide, Approve).
	return &policy.Caller{Identity: w.user, Claims: w.claims, Door: policy.DoorConsole, Session: "console", Client: "agent-tools-console",
		Interactive: w.person && !w.bearer}
}

// refused asks the gate whether who may use a route of this action: nil,
// or the refusal to answer with 403.
func (c *Console) refused(who caller, action routeAction) *toolerr.Error {
	if action == loggedIn {
		return nil
	}
	d := c.rt.Gate().Decide(who.policyCaller(), policy.Administer, policy.Target{Kind: policy.AdminTarget})
	if d.Verdict == policy.Allow {
		return nil
	}
	return d.Err
}

// RouteAccess is one authenticated route and whether it needs an operator.
type RouteAccess struct {
	Method, Path string
	Operator     bool
}

// Routes lists every authenticated route with the access it needs, from the
// one table the mux is built from: a test walks it, so a new route is
// checked by construction.
func (c *Console) Routes() []RouteAccess {
	var out []RouteAccess
	for _, r := range c.routeTable() {
		method, path, _ := strings.Cut(r.pattern, " ")
		out = append(out, RouteAccess{Method: method, Path: path, Operator: r.action != loggedIn})
	}
	return out
}
