package pipeline

import (
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// heldCatalog is implemented by catalogs that hold tools back because an
// upstream changed their pinned definition (security.pin: quarantine).
type heldCatalog interface {
	Held(canonical string) (providerID string, ok bool)
}

// heldTool is the teaching error for a call to a quarantined tool, or nil
// when req's tool is not held back.
func heldTool(gate *policy.Gate, cat Catalog, req *Request) *toolerr.Error {
	h, ok := cat.(heldCatalog)
	if !ok {
		return nil
	}
	name := req.Tool
	if req.Provider != "" {
		// A provider-scoped call names the tool by its own name; the pin is
		// kept under the canonical one.
		if c, ok := cat.(interface {
			Canonical(providerID, name string) string
		}); ok {
			name = c.Canonical(req.Provider, req.Tool)
		}
	}
	provider, held := h.Held(name)
	if !held {
		return nil
	}
	// The gate decides on the held tool as on any: one the caller may not
	// see answers as unknown (nil here), not as quarantined.
	d := gate.Decide(&req.Caller, policy.Call, policy.Target{Provider: provider, Canonical: name, Quarantined: true})
	if d.Verdict != policy.Deny {
		return nil
	}
	if he, ok := cat.(interface{ HeldError(string) *toolerr.Error }); ok {
		if e := he.HeldError(name); e != nil { // why it is held: changed, new, flagged (registry/pins.go)
			return e
		}
	}
	return toolerr.New(toolerr.Denied,
		"A person must approve the new definition first: in the console's pins view, or with `agent-tools pins approve "+name+"`. Tell the user; do not retry.",
		"tool %q is quarantined: its upstream changed its definition since it was pinned", name)
}
