package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Policy applies confirmation, for tool calls and skill runs alike: this
// is the one place the confirmation rule is applied (policy.NeedsConfirm
// says which calls need one; who may call what was decided by the gate in
// Access, which also chose the confirm mode for this caller). A mutating
// call is confirmed by a decision the person made earlier ("always allow",
// "for this session": decisions, which may be nil), else by a human when the
// client can be asked (elicitation, or the console's Approvals page);
// otherwise, in agent mode, by the agent's explicit confirm flag, and in
// token mode by the one-time token its CONFIRMATION_REQUIRED error carried.
// In human mode nothing else counts. A call already Confirmed (a confirmed
// skill's own calls) needs nothing more.
func Policy(tokens *policy.Tokens, decisions Decisions) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			mode := req.confirmMode
			if reason, ok := needsHuman(req); ok {
				// Under human-confirm semantics whatever the mode: nothing
				// but a person's answer to this very call counts.
				if err, decision := confirmByHuman(ctx, req, reason); err != nil {
					return fail(err, decision)
				}
				req.Confirmed = true
				return withDecision(next(ctx, req), "confirmed")
			}
			if req.Op || !policy.NeedsConfirm(req.Resolved, req.Info) || readOnlyCall(req) {
				return withDecision(next(ctx, req), "allowed")
			}
			if req.Confirmed {
				return withDecision(next(ctx, req), "confirmed")
			}
			if decisions != nil && decisions.Allowed(req.Resolved, decisionScope(req)) {
				req.Confirmed = true
				return withDecision(next(ctx, req), "remembered")
			}
			if err, decision := confirm(ctx, mode, tokens, decisions, req); err != nil {
				resp := fail(err, decision)
				if req.Run != "" {
					resp.Token = scriptToken(err)
				}
				return resp
			}
			req.Confirmed = true
			return withDecision(next(ctx, req), "confirmed")
		}
	}
}

// scriptToken takes the token out of a script call's
// CONFIRMATION_REQUIRED: the script sees that a confirmation is needed,
// the model gets the token (with the script's result).
func scriptToken(e *toolerr.Error) string {
	tok, _ := e.Details["confirm_token"].(string)
	if tok == "" {
		return ""
	}
	delete(e.Details, "confirm_token")
	delete(e.Details, "retry")
	e.Message = strings.Replace(e.Message, "; the token in `retry` confirms this exact call once, with these arguments", "", 1)
	e.Hint = "A script cannot confirm its own calls: the confirmation token goes back to the model with this script's result. Return, and let the model decide."
	return tok
}

// readOnlyCall asks a provider that classifies calls one by one whether
// this call is read-only (provider.CallClassifier); AlwaysConfirm wins.
func readOnlyCall(req *Request) bool {
	if req.Resolved.AlwaysConfirm || req.Backend == nil {
		return false
	}
	c, ok := provider.As[provider.CallClassifier](req.Backend)
	return ok && c.ReadOnlyCall(req.Resolved, req.Args)
}

// needsHuman asks the provider whether this call needs a person's approval
// whatever the confirm mode (provider.HumanApprover).
func needsHuman(req *Request) (string, bool) {
	if req.Skill || req.Backend == nil {
		return "", false
	}
	h, ok := provider.As[provider.HumanApprover](req.Backend)
	if !ok {
		return "", false
	}
	return h.NeedsHumanApproval(req.Resolved, req.Args)
}

// confirmByHuman is confirm under confirm: human for one call, with the
// provider's reason in the question; the answer is never remembered (it
// approves these arguments, not the tool).
func confirmByHuman(ctx context.Context, req *Request, reason string) (*toolerr.Error, string) {
	ask := req.AskHuman
	if ask == nil {
		ask = req.AskPerson
	}
	if ask == nil {
		return toolerr.New(toolerr.Denied,
			"This call needs a person's approval and this client cannot ask one; call again without the part that needs it, or tell the user what you wanted to do.",
			"%q needs a person's approval: %s", req.Resolved.Canonical, reason).With("reason", reason), "denied"
	}
	wctx, done := personWait(ctx) // ends at once when the server begins to shut down
	if stopped(wctx) {
		return shuttingDown(req).With("reason", reason), "shutting_down"
	}
	answer, err := ask(wctx, fmt.Sprintf("Allow the agent to run %s with arguments %s? %s",
		req.Resolved.Canonical, text.Clip(string(req.Args), 500), reason))
	done()
	switch {
	case err != nil && stopped(wctx):
		return shuttingDown(req).With("reason", reason), "shutting_down"
	case err != nil:
		return toolerr.New(toolerr.Denied, "Ask the user to approve the call in their client, then retry.",
			"could not ask for approval: %v", err).With("reason", reason), "denied"
	case !answer.Approved():
		return toolerr.New(toolerr.Denied, "The user declined this call; do not retry it without asking them.",
			"the user declined %q", req.Resolved.Canonical).With("reason", reason), "denied"
	}
	return nil, ""
}

// confirm decides whether a call that needs confirmation has it; nil means
// confirmed, else the error and the audit decision.
func confirm(ctx context.Context, mode policy.ConfirmMode, tokens *policy.Tokens, decisions Decisions, req *Request) (*toolerr.Error, string) {
	ask := req.AskHuman
	if ask == nil && mode == policy.ConfirmHuman {
		ask = req.AskPerson // the console's queue: a rule's confirm: human waits there as the global one does
	}
	if ask != nil {
		wctx, done := personWait(ctx) // ends at once when the server begins to shut down
		if stopped(wctx) {
			return shuttingDown(req), "shutting_down"
		}
		answer, err := ask(wctx, fmt.Sprintf("Allow the agent to run %s with arguments %s?",
			req.Resolved.Canonical, text.Clip(string(req.Args), 500)))
		done()
		switch {
		case err != nil && stopped(wctx):
			return shuttingDown(req), "shutting_down"
		case err == nil && answer.Approved():
			if decisions != nil {
				decisions.Remember(req.Resolved, decisionScope(req), answer) // "for this session", "always": for this caller
			}
			return nil, ""
		case err == nil:
			return toolerr.New(toolerr.Denied, "The user declined this call; do not retry it without asking them.",
				"the user declined %q", req.Resolved.Canonical), "denied"
		case mode == policy.ConfirmHuman:
			return toolerr.New(toolerr.Denied, "Ask the user to approve the change in their client, then retry.",
				"could not ask for confirmation: %v", err), "denied"
		}
		// The client advertised elicitation but could not ask: fall back to the agent's flag.
	}
	switch mode {
	case policy.ConfirmHuman:
		return toolerr.New(toolerr.Denied,
			"This runtime requires a person to approve changes and this client cannot ask one; tell the user what you wanted to do.",
			"%q changes state and no human can be asked to confirm it", req.Resolved.Canonical), "denied"
	case policy.ConfirmToken:
		key := loopKey(req)
		if req.ConfirmToken == "" || !tokens.Redeem(req.ConfirmToken, key) {
			return confirmationRequired(req, tokens.Issue(key)), "confirmation_required"
		}
		return nil, ""
	}
	if !req.Confirm {
		return confirmationRequired(req, true), "confirmation_required"
	}
	return nil, ""
}

// confirmationRequired teaches the exact retry; confirm is true, or the
// one-time token (bound to these exact arguments) in token mode.
func confirmationRequired(req *Request, confirm any) *toolerr.Error {
	var e *toolerr.Error
	if req.Skill {
		hint := "This skill changes state. If the user wants this change, repeat the call with confirm: true."
		if _, token := confirm.(string); token {
			hint = "This skill changes state. If the user wants this change, repeat the exact call in `retry` (it adds the confirmation); otherwise do not run it."
		}
		e = toolerr.New(toolerr.ConfirmationRequired, hint, "skill %q changes state and needs confirmation", req.Resolved.Name)
	} else {
		e = toolerr.New(toolerr.ConfirmationRequired,
			"This tool changes state. If the user wants this change, repeat the exact call in `retry` (it adds the confirmation); otherwise do not call it.",
			"%q is not read-only and needs confirmation", req.Resolved.Canonical)
	}
	if tok, ok := confirm.(string); ok {
		e.With("confirm_token", tok)
		e.Message += "; the token in `retry` confirms this exact call once, with these arguments"
	}
	if req.Shape != nil {
		e.With("retry", req.Shape.Call(req.Tool, req.Args, confirm))
	}
	return e
}

func withDecision(r *Response, d string) *Response {
	if r.Decision == "" {
		r.Decision = d
	}
	return r
}

// LoopGuard escalates and refuses repeated identical failures within a session.
func LoopGuard(g *policy.LoopGuard) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			key := loopKey(req)
			refused, n := g.Refused(key)
			if refused {
				return fail(toolerr.New(toolerr.RepeatedFailure,
					"Stop calling this. Change the arguments or the tool, or report the failure to the user.",
					"this exact call already failed %d times in this session; it is refused for %s", n, g.CoolDown).
					With("failures", n), "refused")
			}
			resp := next(ctx, req)
			if !resp.Failed() {
				if n > 0 { // nothing to reset otherwise: one state round trip saved
					g.Succeeded(key)
				}
				return resp
			}
			if notTheAgents(resp.Err) {
				return resp
			}
			if n := g.Failed(key); g.Escalate(n) {
				resp.Err = repeated(resp, n)
				resp.Result = nil
			}
			return resp
		}
	}
}

// notTheAgents says whether e is no failure of the agent's call, so that
// repeating it is no loop: asking for confirmation, a cancellation, a
// shutdown, and a refusal for capacity that says when to come back
// (retry_after_ms: a full script pool, an upstream's rate limit). Counting
// those would turn "wait and retry", which the error teaches, into
// REPEATED_FAILURE.
func notTheAgents(e *toolerr.Error) bool {
	if e == nil {
		return false
	}
	switch e.Code {
	case toolerr.ConfirmationRequired, toolerr.Cancelled, toolerr.ShuttingDown:
		return true
	}
	_, wait := e.Details["retry_after_ms"]
	return wait
}

func repeated(resp *Response, n int) *toolerr.Error {
	last := resp.Err
	if last == nil {
		last = BackendError(resp.Result)
	}
	e := toolerr.New(toolerr.RepeatedFailure,
		"Stop retrying the same call: it will fail the same way. "+last.Hint,
		"this exact call failed %d times in a row: %s", n, last.Message).
		With("failures", n).
		With("last_error", last.Body()["error"])
	for _, k := range []string{"correct_shape", "retry", "did_you_mean", "expected_schema"} {
		if v, ok := last.Details[k]; ok {
			e.With(k, v)
		}
	}
	return e
}

func loopKey(req *Request) string { return CallKey(req) }

// ArgsHash is the audit's fingerprint of the arguments: never their values.
func ArgsHash(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:8])
}

// AuditRecord is one line of the audit log.
type AuditRecord struct {
	Time       time.Time `json:"time"`
	Replica    string    `json:"replica,omitempty"`
	RequestID  string    `json:"request_id"`
	Parent     string    `json:"parent,omitempty"`
	Identity   string    `json:"identity,omitempty"`
	Session    string    `json:"session,omitempty"`
	Client     string    `json:"client,omitempty"`
	Profile    string    `json:"profile,omitempty"` // the profile the call came through ("" = /mcp)
	Tool       string    `json:"tool"`
	Provider   string    `json:"provider,omitempty"`
	Via        string    `json:"via,omitempty"`
	Decision   string    `json:"decision"`
	DurationMS float64   `json:"duration_ms"`
	Outcome    string    `json:"outcome"` // ok | error
	ErrorCode  string    `json:"error_code,omitempty"`
	ArgsHash   string    `json:"args_sha256"`
	// ResultTokens: the o200k_base tokens of what the model receives
	// (Response.ResultTokens), on every line; ResultTokensEstimated when
	// that is characters/4 instead (a text over tokens.MaxExact bytes).
	ResultTokens          int  `json:"result_tokens"`
	ResultTokensEstimated bool `json:"result_tokens_estimated,omitempty"`
	// ResultFindings: what the result guard found in the output.
	ResultFindings []ResultFinding `json:"result_findings,omitempty"`
	// Quota: which quota refused the call (internal/quota).
	Quota *QuotaRefusal `json:"quota,omitempty"`
	// Cache: "hit" (answered by the result cache) or "miss".
	Cache string `json:"cache,omitempty"`
}

// audit writes one JSON line per call to w (nil disables), stamping every
// record with the replica that wrote it. It also stamps the response's
// Duration.
func audit(w io.Writer, now func() time.Time, replica string) Middleware {
	var mu sync.Mutex
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			start := now()
			resp := scrub(next(ctx, req))
			resp.Duration = now().Sub(start)
			if w == nil {
				return resp
			}
			if req.RequestID == "" {
				req.RequestID = newRequestID()
			}
			rec := AuditRecord{
				Time: start.UTC(), Replica: replica, RequestID: req.RequestID, Parent: req.Parent, Identity: req.Identity, Session: req.Session, Client: req.Client, Profile: req.Profile, Tool: req.Resolved.Canonical,
				Provider: req.Resolved.Provider, Via: req.Via, Decision: resp.Decision,
				DurationMS: float64(resp.Duration.Microseconds()) / 1000, Outcome: "ok", ArgsHash: ArgsHash(req.Args),
				ResultFindings: resp.ResultFindings, Cache: resp.Cache, Quota: resp.Quota,
			}
			if rec.Tool == "" {
				rec.Tool = req.Tool
			}
			rec.ResultTokens, rec.ResultTokensEstimated = resp.ResultTokens()
			if resp.Failed() {
				rec.Outcome = "error"
				rec.ErrorCode = string(toolerr.BackendError)
				if resp.Err != nil {
					rec.ErrorCode = string(resp.Err.Code)
				}
			}
			line := append(appendAuditLine(make([]byte, 0, 320), &rec), '\n') // json.Marshal's bytes (auditline.go)
			mu.Lock()
			// A failed audit write must not fail the call it records; a full
			// disk shows on the file itself.
			_, _ = w.Write(redact.Default.Bytes(line))
			mu.Unlock()
			return resp
		}
	}
}

// ExecuteOptions bound every call.
type ExecuteOptions struct {
	DefaultTimeout time.Duration // when neither tool nor provider sets one
	MaxResultChars int           // 0 = no cap
}

// Execute calls the provider under a deadline and shapes the result.
func Execute(o ExecuteOptions) Middleware {
	return func(Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			timeout := req.Resolved.Timeout
			if timeout <= 0 && !req.Skill { // a provider's per-call deadline is for one tool call, not a recipe of several
				timeout = req.Info.Timeout
			}
			if timeout <= 0 {
				timeout = o.DefaultTimeout
			}
			callCtx := ctx
			if timeout > 0 {
				var cancel context.CancelFunc
				callCtx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			var res *provider.Result
			var err error
			if req.Skill {
				res, err = runSkill(callCtx, req)
			} else {
				res, err = provider.CallWith(callCtx, req.Backend, req.Resolved, req.Resolved.FillHidden(req.Args), req.Values) // an override's hidden arguments
			}
			if err != nil {
				return &Response{Err: callError(ctx, callCtx, req, timeout, err)}
			}
			if res == nil {
				res = &provider.Result{}
			}
			res.Text = capText(res.Text, o.MaxResultChars)
			if res.IsError {
				return &Response{Result: res, Err: BackendError(res)}
			}
			return &Response{Result: res}
		}
	}
}

func callError(parent, callCtx context.Context, req *Request, timeout time.Duration, err error) *toolerr.Error {
	if te, ok := toolerr.As(err); ok {
		return te
	}
	switch {
	case parent.Err() != nil:
		return toolerr.New(toolerr.Cancelled, "The call was cancelled by the client.", "call to %q was cancelled", req.Resolved.Canonical)
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return toolerr.New(toolerr.Timeout,
			"The tool did not answer in time. Narrow the request, or tell the user it is slow; do not retry unchanged.",
			"%q did not finish within %s", req.Resolved.Canonical, timeout)
	}
	if req.Skill {
		return toolerr.New(toolerr.BackendError, "The skill failed; read the message before retrying.", "skill %q failed: %v", req.Resolved.Name, err)
	}
	return toolerr.New(toolerr.BackendError, "The backend failed; read the message, and report it to the user if it persists.",
		"%q failed: %v", req.Resolved.Canonical, err)
}

// BackendError wraps a tool's own failure (non-zero exit, error result) in the envelope.
func BackendError(res *provider.Result) *toolerr.Error {
	e := toolerr.New(toolerr.BackendError,
		"The tool ran and reported a failure; read `output`, fix the cause, and only then retry.",
		"the tool reported an error")
	for k, v := range res.Details {
		if h, ok := v.(string); ok && k == "hint" && h != "" {
			e.Hint = h // the backend knows better (a REST 401 → the credentials)
			continue
		}
		e.With(k, v)
	}
	if code, ok := res.Details["exit_code"]; ok {
		e.Message = fmt.Sprintf("the tool exited with status %v", code)
	}
	e.With("output", res.Text)
	return e
}

// capText keeps the first max characters (runes) and says how much was cut.
func capText(s string, maxChars int) string {
	if maxChars <= 0 || len(s) <= maxChars {
		return s
	}
	r := []rune(s)
	if len(r) <= maxChars {
		return s
	}
	return string(r[:maxChars]) + fmt.Sprintf("\n[result truncated: showing %d of %d characters; ask for less output]", maxChars, len(r))
}
