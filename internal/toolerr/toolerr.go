// Package toolerr is the error envelope every failed call returns to the model:
// {"error": {"code", "message", "hint", ...}} (docs/modes.md, "Errors that teach").
package toolerr

import (
	"errors"
	"fmt"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
)

// Code is a stable, documented error code that models and clients branch on.
type Code string

const (
	MissingToolName      Code = "MISSING_TOOL_NAME"
	UnknownTool          Code = "UNKNOWN_TOOL"
	InvalidArguments     Code = "INVALID_ARGUMENTS"
	ConfirmationRequired Code = "CONFIRMATION_REQUIRED"
	Denied               Code = "DENIED"
	Timeout              Code = "TIMEOUT"
	BackendError         Code = "BACKEND_ERROR"
	ProviderUnavailable  Code = "PROVIDER_UNAVAILABLE"
	ProviderNeedsLogin   Code = "PROVIDER_NEEDS_LOGIN" // an upstream waits for a person's login (agent-tools auth login)
	RepeatedFailure      Code = "REPEATED_FAILURE"
	Cancelled            Code = "CANCELLED"
	ShuttingDown         Code = "SHUTTING_DOWN" // the server began to shut down before the call ran: retry after it restarts
	UnknownSkill         Code = "UNKNOWN_SKILL"
	ResultBlocked        Code = "RESULT_BLOCKED" // a tool's output read like instructions to the model (security.results.scan: block)
	RateLimited          Code = "RATE_LIMITED"   // a quota's rate or concurrent limit: wait retry_after_ms, then repeat the call
	QuotaExceeded        Code = "QUOTA_EXCEEDED" // a quota's result tokens for this window are used up: retry_after_ms is the window's end
)

// Error is a tool-level failure with a hint that teaches the right next call.
// Details carries code-specific fields (did_you_mean, expected_schema, retry, ...).
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Hint    string         `json:"hint,omitempty"`
	Details map[string]any `json:"-"`
}

// New builds an Error.
func New(code Code, hint, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint}
}

// With adds a detail field and returns e for chaining.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Body is the envelope: {"error": {...}} with details flattened next to code/message/hint.
func (e *Error) Body() map[string]any {
	inner := make(map[string]any, 3+len(e.Details))
	for k, v := range e.Details {
		inner[k] = v
	}
	inner["code"] = e.Code
	inner["message"] = e.Message
	if e.Hint != "" {
		inner["hint"] = e.Hint
	}
	return map[string]any{"error": inner}
}

// JSON renders the envelope as indented-free JSON text.
func (e *Error) JSON() string {
	b, err := jsonscan.Marshal(e.Body())
	if err != nil { // only reachable with an unmarshalable detail: keep the essentials
		b, _ = jsonscan.Marshal(map[string]any{"error": map[string]any{"code": e.Code, "message": e.Message, "hint": e.Hint}})
	}
	return string(b)
}

// As extracts an *Error from err's chain.
func As(err error) (*Error, bool) {
	var te *Error
	ok := errors.As(err, &te)
	return te, ok
}
