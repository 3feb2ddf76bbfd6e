// Package pipeline is the one path every tool call takes. It is built from
// middleware in one fixed, documented order (outermost first):
//
//  1. Audit     — one JSON line per call, whatever happened below
//  2. LoopGuard — escalates and then refuses identical failing calls
//  3. Resolve   — names → catalog tool (MISSING_TOOL_NAME, UNKNOWN_TOOL,
//     UNKNOWN_SKILL: a skill run resolves to a tool-like entry, see skill.go)
//  4. Access    — the one access decision (policy.Gate) on the resolved
//     tool: a tool the caller may not see answers as one that does not
//     exist (UNKNOWN_TOOL), before validation; quarantine, read-only doors
//     (DENIED); the confirm mode that applies to this caller
//     (then Quota, when Options.Quota is set: internal/quota, RATE_LIMITED
//     and QUOTA_EXCEEDED for the caller's quotas)
//  5. Validate  — arguments against the tool's JSON Schema, then the
//     provider's own rules (provider.ArgumentValidator): INVALID_ARGUMENTS or
//     the provider's code, before anyone is asked to confirm
//  6. Policy    — allow/deny, confirmation (DENIED, CONFIRMATION_REQUIRED);
//     a call a provider.HumanApprover marks needs a person in every mode
//  7. ResultGuard — (when Options.ResultGuard is set) the tool's output read
//     for text aimed at the model: warned, redacted, blocked
//     (RESULT_BLOCKED), spotlighted (internal/resultguard)
//  8. ResultCache — (when Options.ResultCache is set) a repeated read-only
//     call answered from a kept result (internal/resultcache), below every
//     decision
//  9. Execute   — the provider call under a deadline, then result shaping
//
// The loop guard sits outside Resolve so that malformed calls that never name
// a tool (one run of an earlier prototype retried a malformed call 1,022 times) are caught too.
//
// Options.Extra adds middleware between Audit and LoopGuard (metrics,
// shutdown drain). Options.Tracer, when set, wraps the whole call and each
// named stage (Stage* constants) so that internal/tracing can record them as
// nested spans; this package imports no tracing library, and without a
// Tracer nothing is wrapped.
package pipeline

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Request is one call as the facade understood it.
type Request struct {
	// Caller is who asks and through which door (identity, claims,
	// profile, session, client, door, read-only, script run): one value the
	// door fills and every stage and the gate read (policy.Caller). Its
	// fields are promoted: req.Identity is req.Caller.Identity.
	policy.Caller
	// RequestID tags the call's audit record (generated when empty).
	RequestID string
	// Parent is the RequestID of the call this one runs inside (a tool call
	// an execute_javascript script makes), for audit.
	Parent string
	// TraceParent and TraceState are the W3C trace context an HTTP client
	// sent with the call (headers), for a Tracer to continue its trace.
	TraceParent, TraceState string
	// Via is the MCP tool the client called (a meta-tool or a flat name).
	Via string
	// Provider scopes Tool to one provider (progressive call); "" means Tool is canonical.
	Provider string
	// Tool is the name as given; Resolve fills Resolved.
	Tool string
	Args json.RawMessage
	// Values go to the provider with the call, explicitly (a script's
	// tools object, a passthrough's binding): provider.CallWith.
	Values provider.Values
	// Confirm is the agent's explicit confirmation of a mutating call.
	Confirm bool
	// ConfirmToken is the one-time token of a CONFIRMATION_REQUIRED error (token mode).
	ConfirmToken string
	// AskHuman asks a person to confirm (elicitation); nil when the client
	// cannot. The answer may extend to later calls (policy.Approval).
	AskHuman func(ctx context.Context, message string) (policy.Approval, error)
	// AskPerson asks a person out of band (the console's Approvals page)
	// when no one can be asked in the client: used only where a person
	// must confirm (the confirm mode that applies to this caller is human,
	// or the provider asks for a person), whatever set that mode.
	AskPerson func(ctx context.Context, message string) (policy.Approval, error)
	// Shape is the facade's knowledge of its own argument shape, for hints.
	Shape Shape
	// Malformed is set by a facade that could not parse the call; it is
	// returned as the call's error, still audited and loop-guarded.
	Malformed *toolerr.Error

	// Skill marks a skill run: Tool names a skill of Provider. It takes the
	// same path as a tool call, under the skill's canonical name.
	Skill bool
	// SkillCalls runs the tool calls a skill makes (back through the pipeline).
	SkillCalls provider.ToolCaller
	// Confirmed is set by Policy once this call is confirmed; a caller may
	// set it on the calls a confirmed skill makes, which its confirmation
	// covers.
	Confirmed bool

	// Op marks a forwarded request that is no tool call (a resource read,
	// a prompt fetch, a completion, a subscription): the door resolved it
	// (Resolved, Backend) and the gate decides it as such.
	Op bool
	// SessionOp marks an Op that sets only the client's own session
	// (logging/setLevel): policy.Target.SessionOp.
	SessionOp bool
	// ModeTool marks a call of the exposure mode's own tool (code mode's
	// interpreter), which is part of every view of that mode.
	ModeTool bool

	Resolved catalog.Tool
	Info     catalog.ProviderInfo
	Backend  provider.Provider

	// confirmMode is who must confirm this call if it changes state, as the
	// gate decided for this caller (Access → Policy).
	confirmMode policy.ConfirmMode
}

// Shape renders the exact call a model should make, in the facade's own terms.
type Shape interface {
	// Call is the full call for tool with args; a non-nil confirm (true, or a
	// token string) adds the confirmation.
	Call(tool string, args json.RawMessage, confirm any) map[string]any
}

// Response is the outcome of one call. Exactly one of Result and Err is set.
type Response struct {
	Result *provider.Result
	Err    *toolerr.Error
	// Token is the confirmation token of a CONFIRMATION_REQUIRED answered
	// to a script's call (Caller.Run set): it goes back to the model with
	// the script's result, never to the script, so a script cannot
	// confirm its own calls without a model turn in between.
	Token    string
	Decision string // allowed | confirmed | confirmation_required | denied | refused | invalid
	Duration time.Duration
	// ResultFindings are what the result guard found in the tool's
	// output (audited as result_findings).
	ResultFindings []ResultFinding
	// Quota says which quota refused the call (internal/quota; audited
	// as quota, counted by metrics); nil when none did.
	Quota *QuotaRefusal
	// Cache is "hit" when the result cache answered the call
	// (internal/resultcache), "miss" when it could have and did not, ""
	// when the call is not cached (audited as cache).
	Cache string
	// tokens is ResultTokens' count, made once (tokens.go).
	tokens resultTokens
}

// Failed reports whether the call failed in any way.
func (r *Response) Failed() bool { return r.Err != nil || (r.Result != nil && r.Result.IsError) }

// Handler runs a request.
type Handler func(ctx context.Context, req *Request) *Response

// Middleware wraps a Handler.
type Middleware func(Handler) Handler

// Chain composes middleware so that the first one is the outermost.
func Chain(h Handler, mw ...Middleware) Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

func fail(err *toolerr.Error, decision string) *Response {
	return &Response{Err: err, Decision: decision}
}
