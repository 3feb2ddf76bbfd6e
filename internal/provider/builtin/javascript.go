package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// JavaScriptTool is the sandboxed interpreter (docs/providers/builtins.md).
const JavaScriptTool = "execute_javascript"

// MaxJavaScriptTimeout is the largest timeout_ms a call may ask for.
const MaxJavaScriptTimeout = 10 * time.Second

// JavaScriptLimits bound execute_javascript (zero fields: jsrun's defaults).
type JavaScriptLimits = jsrun.Limits

const javaScriptDescription = "Run JavaScript in an isolated sandbox and get back the value of the last expression, JSON-encoded, " +
	"plus what console.log/info/warn/error printed. Use it for calculations (exact arithmetic, math, dates), " +
	"parsing and reshaping JSON or text you already have (filter, sort, group, aggregate), and checking a small algorithm. " +
	"It cannot read or write files, reach the network, run commands, or see anything but the code you pass: " +
	"there is no require/import, fetch, process or setTimeout. Top-level await and return work. " +
	"Limits: 2.5 s by default (timeout_ms up to 10000), 30,000 characters of output, 200 console entries, " +
	"strings of 16M characters and arrays of 8M elements. A thrown exception or syntax error comes back as an error with its line. " +
	"The one way out is `tools`: tools.search(query), tools.describe(name) and await tools.call(name, args) reach this server's other tools " +
	"through the same checks as a direct call (read-only tools only, unless the server allows more)."

var javaScriptSchema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
	`"code":{"type":"string","minLength":1,"maxLength":%d,"description":"JavaScript source (a script, not a module). The value of its last expression statement, or of a top-level return, is the result."},`+
	`"timeout_ms":{"type":"integer","minimum":1,"maximum":%d,"description":"Watchdog in milliseconds (default %d)."}},`+
	`"required":["code"],"additionalProperties":false}`,
	jsrun.MaxSourceLen, MaxJavaScriptTimeout.Milliseconds(), jsrun.DefaultTimeout.Milliseconds()))

func javaScriptTool(code CodeOptions) catalog.Tool {
	return catalog.Tool{
		Provider:    ID,
		Name:        JavaScriptTool,
		Title:       "Run JavaScript in a sandbox",
		Description: javaScriptDescription,
		InputSchema: javaScriptSchema,
		// No side effects by construction: the sandbox reaches nothing outside itself.
		ReadOnly: true,
		// The watchdog ends every run first; this only keeps the pipeline's
		// default deadline from cutting a 10 s run short.
		// A script with tools may run for code.timeout.
		Timeout: max(MaxJavaScriptTimeout, code.withDefaults().Timeout) + 2*jsrun.Grace,
	}
}

type javaScriptArgs struct {
	Code      *string         `json:"code"`
	TimeoutMS json.RawMessage `json:"timeout_ms"`
}

func (p *Provider) executeJavaScript(ctx context.Context, raw json.RawMessage) (*provider.Result, error) {
	code, timeout, err := p.parseJavaScriptArgs(raw)
	if err != nil {
		return nil, err
	}
	lim := p.opts.JavaScript
	if timeout > 0 {
		lim.Timeout = timeout
	}
	var (
		run   *scriptRun
		setup jsrun.Setup
	)
	if host := scriptHostFrom(ctx); host != nil {
		run, setup = p.installTools(host)
		if timeout == 0 {
			lim.Timeout = run.opts.Timeout
		}
	}
	out, err := jsrun.RunWith(ctx, code, lim, setup)
	if err == nil {
		b, err := jsonscan.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encoding the result: %w", err)
		}
		return &provider.Result{Text: string(b), Structured: out}, nil
	}
	var je *jsrun.Error
	if !errors.As(err, &je) {
		return nil, err
	}
	switch je.Kind {
	case jsrun.KindTimeout:
		te := toolerr.New(toolerr.Timeout,
			"The code ran past its time limit: an endless loop, or too much work. Fix the loop or do less; timeout_ms can go up to "+
				fmt.Sprint(MaxJavaScriptTimeout.Milliseconds())+".",
			"%s: %s", JavaScriptTool, je.Message)
		if len(je.Console) > 0 {
			te.With("console", je.Console)
		}
		return nil, te
	case jsrun.KindCancelled:
		if je.Cause != nil {
			return nil, je.Cause
		}
		return nil, context.Canceled
	case jsrun.KindInternal:
		return nil, je
	}
	details := map[string]any{"js_error": jsErrorDetails(je)}
	if t, ok := run.toolErrorOf(je); ok && t.Err.Code != toolerr.BackendError {
		// A refusal the script did not catch (DENIED, CONFIRMATION_REQUIRED,
		// PROVIDER_NEEDS_LOGIN, UNKNOWN_TOOL...): the script's answer is
		// that refusal in its own words and code, not "the tool ran and
		// reported a failure".
		te := toolerr.New(t.Err.Code, t.Err.Hint, "the script did not catch a refusal of tools.call(%q): %s", t.Tool, t.Err.Message)
		for k, v := range t.Err.Details {
			te.With(k, v)
		}
		te.With("tool", t.Tool).With("js_error", jsErrorDetails(je))
		if len(je.Console) > 0 {
			te.With("console", je.Console)
		}
		return nil, te
	} else if ok {
		// A tool's own failure the script did not catch: its envelope, so
		// the model sees the output as for a direct call.
		details["tool"], details["tool_error"] = t.Tool, t.Err.Body()["error"]
	}
	if len(je.Console) > 0 || je.Truncated {
		details["console"] = je.Console
		details["truncated"] = je.Truncated
	}
	return &provider.Result{Text: je.Error(), IsError: true, Details: details}, nil
}

func jsErrorDetails(je *jsrun.Error) map[string]any {
	d := map[string]any{"kind": je.Kind, "message": je.Message}
	if je.Line > 0 {
		d["line"], d["column"] = je.Line, je.Column
	}
	if je.Stack != "" {
		d["stack"] = je.Stack
	}
	return d
}

// parseJavaScriptArgs checks the arguments again: Call may be reached
// without the pipeline's schema validation.
func (p *Provider) parseJavaScriptArgs(raw json.RawMessage) (string, time.Duration, error) {
	bad := func(format string, a ...any) error {
		return toolerr.New(toolerr.InvalidArguments, `Pass {"code": "<JavaScript>", "timeout_ms"?: <1..10000>}.`, format, a...).
			With("expected_schema", javaScriptSchema)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var a javaScriptArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return "", 0, bad("%s arguments: %v", JavaScriptTool, err)
	}
	if a.Code == nil {
		return "", 0, bad("%s needs `code`", JavaScriptTool)
	}
	if *a.Code == "" {
		return "", 0, bad("%s: `code` is empty", JavaScriptTool)
	}
	var timeout time.Duration
	if a.TimeoutMS != nil {
		var ms float64
		if err := json.Unmarshal(a.TimeoutMS, &ms); err != nil || ms != math.Trunc(ms) || ms < 1 || ms > float64(MaxJavaScriptTimeout.Milliseconds()) {
			return "", 0, bad("%s: timeout_ms must be an integer from 1 to %d, not %s", JavaScriptTool, MaxJavaScriptTimeout.Milliseconds(), a.TimeoutMS)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	return *a.Code, timeout, nil
}
