// Package pipeline is the one path every tool call takes. It is built from
// middleware in one fixed, documented order (outermost first):
//
//  1. Audit     — one JSON line per call, whatever happened below
//  2. LoopGuard — escalates and then refuses identical failing calls
//  3. Resolve   — names → catalog tool (MISSING_TOOL_NAME, UNKNOWN_TOOL,
//     UNKNOWN_SKILL: a skill run resolves to a tool-like entry, see skill.go)
//  4. Validate  — arguments against the tool's JSON Schema, then the
//     provider's own rules (provider.ArgumentValidator): INVALID_ARGUMENTS or
//     the provider's code, before anyone is asked to confirm
//  5. Policy    — allow/deny, confirmation (DENIED, CONFIRMATION_REQUIRED);
//     a call a provider.HumanApprover marks needs a person in every mode
//  6. Execute   — the provider call under a deadline, then result shaping
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
	// Identity is who the caller authenticated as ("token:<name or hash prefix>",
	// "oidc:<issuer>|<subject>", "process:<pid>" on stdio; never a token):
	// with Session it scopes the loop guard, tokens and audit.
	Identity string
	// Claims are the verified token claims per-identity rules name (OIDC;
	// "" otherwise): with Identity and Profile they select the rules.
	Claims  policy.Claims
	Session string // the client's session id where one exists ("" when stateless)
	Client  string // client name from initialize, for audit
	// Profile is the profile (view) the call came through: "" for the
	// default endpoint. With Identity it selects the per-identity rules.
	Profile string
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
	// Confirm is the agent's explicit confirmation of a mutating call.
	Confirm bool
	// ConfirmToken is the one-time token of a CONFIRMATION_REQUIRED error (token mode).
	ConfirmToken string
	// AskHuman asks a person to confirm (elicitation); nil when the client
	// cannot. The answer may extend to later calls (policy.Approval).
	AskHuman func(ctx context.Context, message string) (policy.Approval, error)
	// Shape is the facade's knowledge of its own argument shape, for hints.
	Shape Shape
	// Malformed is set by a facade that could not parse the call; it is
	// returned as the call's error, still audited and loop-guarded.
	Malformed *toolerr.Error

	// Skill marks a skill run: Tool names a skill of Provider. It takes the
	// same path as a tool call, under the skill's canonical name.
	Skill bool
	// Caller runs the tool calls a skill makes (back through the pipeline).
	Caller provider.ToolCaller
	// Confirmed is set by Policy once this call is confirmed; a caller may
	// set it on the calls a confirmed skill makes, which its confirmation
	// covers.
	Confirmed bool

	Resolved catalog.Tool
	Info     catalog.ProviderInfo
	Backend  provider.Provider
}

// Shape renders the exact call a model should make, in the facade's own terms.
type Shape interface {
	// Call is the full call for tool with args; a non-nil confirm (true, or a
	// token string) adds the confirmation.
	Call(tool string, args json.RawMessage, confirm any) map[string]any
}

// Response is the outcome of one call. Exactly one of Result and Err is set.
type Response struct {
	Result   *provider.Result
	Err      *toolerr.Error
	Decision string // allowed | confirmed | confirmation_required | denied | refused | invalid
	Duration time.Duration
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
