package proc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// TailChars is how many characters of stdout/stderr an error envelope
// carries (stdout_tail, stderr_tail).
const TailChars = 2000

// Subject names a finished run for the envelope that [Shape] builds, so that
// every provider that spawns processes (local scripts, cli tools, workers)
// answers with identical shapes.
type Subject struct {
	// What names the tool in messages: `local tool "deploy"`.
	What string
	// Timeout is the deadline the run had (reported in TIMEOUT envelopes).
	Timeout time.Duration
	// TimeoutHint tells the model (or the operator) how to give the tool
	// more time; "" gives a generic hint.
	TimeoutHint string
}

// Outcome is a finished run as the model reads it, what [Shape] makes of a
// [Result]: the process layer knows nothing of providers, and the kinds
// that spawn processes copy it into their own result.
type Outcome struct {
	// Text is the result text, never empty on a failure.
	Text string
	// IsError marks a failed run (non-zero exit, signal, incomplete output).
	IsError bool
	// Details are the error envelope's extra fields (exit_code,
	// stderr_tail, signal, output_incomplete) when IsError is set.
	Details map[string]any
}

// deadlineSlack is how much shorter than its timeout a run cut by a
// context deadline may measure and still be reported at the timeout.
const deadlineSlack = 50 * time.Millisecond

// Shape turns a finished run into the outcome the runtime shapes:
//   - the deadline of the run (or of ctx) passed → a TIMEOUT error carrying
//     timeout_ms and the output tails (wrapping ctx.Err() when ctx expired);
//   - ctx was cancelled → CANCELLED (wrapping the cause);
//   - exit 0 → stdout, then "[stderr]" and stderr, as the result text;
//   - non-zero exit or a signal → an IsError result with exit_code,
//     stderr_tail (and signal), never an empty text.
func Shape(ctx context.Context, res *Result, s Subject) (*Outcome, error) {
	ctxDeadline := res.Cancelled && errors.Is(ctx.Err(), context.DeadlineExceeded)
	if res.TimedOut || ctxDeadline {
		d := s.Timeout
		if ctxDeadline || d <= 0 {
			d = res.Duration.Round(time.Millisecond)
			// The deadline that fired is usually the tool's own (the
			// pipeline sets it from the same timeout): the process started
			// a moment after it was set, so its run measures a hair less.
			// Report the timeout then, as the hint does, not "299ms".
			if s.Timeout > 0 && d < s.Timeout && s.Timeout-d <= deadlineSlack {
				d = s.Timeout
			}
		}
		hint := s.TimeoutHint
		if hint == "" {
			hint = fmt.Sprintf("The process and its children were killed after %s; narrow the request or raise the tool's timeout.", FormatDuration(d))
		}
		te := toolerr.New(toolerr.Timeout, hint, "%s timed out after %s", s.What, FormatDuration(d)).
			With("timeout_ms", d.Milliseconds())
		if len(res.Stdout) > 0 {
			te.With("stdout_tail", Tail(Text(res.Stdout), TailChars))
		}
		if len(res.Stderr) > 0 {
			te.With("stderr_tail", Tail(Text(res.Stderr), TailChars))
		}
		if ctxDeadline {
			return nil, fmt.Errorf("%w (%w)", te, ctx.Err())
		}
		return nil, te
	}
	if res.Cancelled {
		te := toolerr.New(toolerr.Cancelled, "", "%s was cancelled; its processes were killed", s.What)
		return nil, fmt.Errorf("%w (%w)", te, context.Cause(ctx))
	}
	out := &Outcome{Text: ResultText(res)}
	if res.ExitCode != 0 {
		out.IsError = true
		out.Details = map[string]any{
			"exit_code":   res.ExitCode,
			"stderr_tail": Tail(Text(res.Stderr), TailChars),
		}
		if res.Signal != 0 {
			out.Details["signal"] = res.Signal.String()
		}
		if out.Text == "" {
			if res.Signal != 0 {
				out.Text = fmt.Sprintf("(no output; killed by signal: %s)", res.Signal)
			} else {
				out.Text = fmt.Sprintf("(no output; exit status %d)", res.ExitCode)
			}
		}
	}
	if res.OutputIncomplete {
		markIncomplete(out)
	}
	return out, nil
}

// markIncomplete turns a run whose output pipe was still held open by an
// escaped descendant into a failure that says so: output it did not really
// get is never reported as a clean success.
func markIncomplete(out *Outcome) {
	out.IsError = true
	if out.Details == nil {
		out.Details = map[string]any{}
	}
	out.Details["output_incomplete"] = true
	out.Text += "\n[output incomplete: a background process that left the tool's process group still held its output open; the runtime stopped reading]"
}

// ResultText is stdout, a truncation note, then "[stderr]" and stderr.
func ResultText(res *Result) string {
	var b strings.Builder
	b.WriteString(Text(res.Stdout))
	if res.StdoutTruncated > 0 {
		fmt.Fprintf(&b, "\n[stdout truncated: %d bytes dropped]", res.StdoutTruncated)
	}
	if len(res.Stderr) > 0 || res.StderrTruncated > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
		b.WriteString("[stderr]\n")
		b.WriteString(Text(res.Stderr))
		if res.StderrTruncated > 0 {
			fmt.Fprintf(&b, "\n[stderr truncated: %d bytes dropped]", res.StderrTruncated)
		}
	}
	return b.String()
}

// FormatDuration prints 2m and 1h rather than 2m0s and 1h0m0s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Tail returns the last n characters (runes) of s, never splitting one.
func Tail(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := len(s)
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
