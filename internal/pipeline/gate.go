package pipeline

import (
	"context"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Access is the gate's stage, right after Resolve and before Validate: the
// caller's access to the tool the pipeline resolved is decided by the one
// access decision (policy.Gate.Decide), on that tool, whatever door the call
// came through. A tool the caller may not see answers exactly as one that
// does not exist (before validation, so a wrong call cannot draw its
// schema out); a refusal teaches; an allowed mutating call carries the
// confirm mode that applies to this caller on to Policy.
func Access(gate *policy.Gate, cat Catalog) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			d := gate.Decide(&req.Caller, policy.Call, TargetOf(req))
			switch d.Verdict {
			case policy.Hide:
				return fail(hidden(gate, cat, req), "denied")
			case policy.Deny:
				return fail(d.Err, "denied")
			}
			req.confirmMode = d.Confirm
			return next(ctx, req)
		}
	}
}

// TargetOf is what a resolved request asks for, as the gate sees it.
func TargetOf(req *Request) policy.Target {
	t := policy.Target{Kind: policy.ToolTarget, Provider: req.Resolved.Provider, Canonical: req.Resolved.Canonical,
		ModeTool: req.ModeTool}
	switch {
	case req.Skill:
		t.Kind = policy.SkillTarget
	case req.Op:
		t.Kind, t.SessionOp = policy.OpTarget, req.SessionOp
		return t // a forwarded request changes nothing a confirmation guards
	}
	t.Mutates = policy.NeedsConfirm(req.Resolved, req.Info) && !readOnlyCall(req)
	return t
}

// hidden is the answer to a target the caller may not see: the very error
// a name that does not exist gets, suggestions drawn only from what the
// caller may see.
func hidden(gate *policy.Gate, cat Catalog, req *Request) *toolerr.Error {
	switch {
	case req.Op:
		return toolerr.New(toolerr.UnknownTool, "Use a name this server lists.", "nothing named %q is available", text.Clip(req.Resolved.Canonical, maxEcho))
	case req.Skill:
		return unknownSkill(gate, cat, req)
	}
	return unknownTool(gate, cat, req)
}

// visibleTo reports whether the caller of req may see t (the gate's See).
func visibleTo(gate *policy.Gate, req *Request, t catalog.Tool) bool {
	return gate.Decide(&req.Caller, policy.See, policy.Target{Provider: t.Provider, Canonical: t.Canonical}).Allowed()
}

// maxEcho bounds how much of a name a caller sent is quoted back in an
// error: an 8 Mi-character name must not come back four times over.
const maxEcho = 200

// clipName is a caller's name as errors quote it.
func clipName(s string) string { return text.Clip(s, maxEcho) }

// minErrorChars is the least an error keeps under a tiny output cap: the
// teaching must survive it.
const minErrorChars = 2000

// capAnswer puts every answer through the output cap, errors included:
// whatever a stage quotes (a name, a backend's output), no error is larger
// than a result may be. Results are capped where they are made (Execute).
func capAnswer(maxChars int) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			resp := next(ctx, req)
			if resp.Err == nil || maxChars <= 0 {
				return resp
			}
			maxChars := max(maxChars, minErrorChars)
			e := resp.Err
			e.Message = capText(e.Message, maxChars)
			for k, v := range e.Details {
				if s, ok := v.(string); ok && len(s) > maxChars {
					e.Details[k] = capText(s, maxChars)
				}
			}
			return resp
		}
	}
}
