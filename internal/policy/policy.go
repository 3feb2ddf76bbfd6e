// Package policy makes the runtime's safety decisions: allow/deny by canonical
// name, whether a call needs confirmation, and when repeated failures must stop.
// It decides; it performs no I/O.
package policy

import (
	"fmt"
	"path"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// ConfirmMode says who confirms a mutating call.
type ConfirmMode string

const (
	// ConfirmAgent: the agent passes confirm: true (or a human is asked when the client can elicit).
	ConfirmAgent ConfirmMode = "agent"
	// ConfirmHuman: only a human, asked through elicitation, can confirm; without one mutations are blocked.
	ConfirmHuman ConfirmMode = "human"
)

// Rules are the allow/deny globs (path.Match syntax) over canonical names.
// Deny wins; a non-empty Allow list is exhaustive.
type Rules struct {
	Allow   []string
	Deny    []string
	Confirm ConfirmMode
}

// Validate reports a malformed glob.
func (r Rules) Validate() error {
	for _, list := range [][]string{r.Allow, r.Deny} {
		for _, g := range list {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("bad glob %q: %w", g, err)
			}
		}
	}
	switch r.Confirm {
	case "", ConfirmAgent, ConfirmHuman, ConfirmToken:
		return nil
	}
	return fmt.Errorf("unknown confirm mode %q (want agent, token or human)", r.Confirm)
}

// check returns a DENIED error when the canonical name is not callable.
// Unexported: a call is decided by the gate (Gate.Decide) and nowhere else;
// doors outside this package can only ask the gate, and list with Visible.
func (r Rules) check(canonical string) *toolerr.Error {
	if g, ok := firstMatch(r.Deny, canonical); ok {
		return toolerr.New(toolerr.Denied,
			"This tool is blocked by the runtime's policy; do not retry it. Use another tool or ask the user.",
			"tool %q is denied by policy rule %q", canonical, g)
	}
	if len(r.Allow) > 0 {
		if _, ok := firstMatch(r.Allow, canonical); !ok {
			return toolerr.New(toolerr.Denied,
				"Only tools on the runtime's allow list can be called; do not retry it.",
				"tool %q is not on the allow list", canonical)
		}
	}
	return nil
}

// Visible reports whether a tool should be listed at all (denied tools are hidden from discovery).
func (r Rules) Visible(canonical string) bool { return r.check(canonical) == nil }

// HidesNone reports whether every name is Visible: no allow or deny list.
func (r Rules) HidesNone() bool { return len(r.Allow) == 0 && len(r.Deny) == 0 }

func firstMatch(globs []string, name string) (string, bool) {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return g, true
		}
	}
	return "", false
}

// NeedsConfirm reports whether calling tool requires a confirmation.
// The gateway owns this decision: a read-only tool never needs one; a tool marked
// AlwaysConfirm always does; otherwise the provider's requireConfirm decides.
func NeedsConfirm(t catalog.Tool, p catalog.ProviderInfo) bool {
	switch {
	case t.AlwaysConfirm:
		return true
	case t.ReadOnly:
		return false
	default:
		return p.RequireConfirm
	}
}
