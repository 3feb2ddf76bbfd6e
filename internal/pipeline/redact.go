package pipeline

import "github.com/agent-tools/agent-tools/internal/redact"

// scrub replaces every secret the runtime knows (internal/redact) in what a
// call returns: result text, structured content and details, and the error
// envelope. It runs in Audit, the outermost stage, so that no stage below
// (nor a provider that echoes its environment) can forget it.
func scrub(resp *Response) *Response {
	s := redact.Default
	if resp == nil || s.Len() == 0 {
		return resp
	}
	if r := resp.Result; r != nil {
		r.Text = s.String(r.Text)
		r.Structured = s.Any(r.Structured)
		r.Details = s.Map(r.Details)
	}
	if e := resp.Err; e != nil {
		e.Message = s.String(e.Message)
		e.Hint = s.String(e.Hint)
		e.Details = s.Map(e.Details)
	}
	return resp
}
