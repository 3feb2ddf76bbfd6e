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
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// JavaScriptTool is the sandboxed interpreter (docs/providers/builtins.md).
const JavaScriptTool = codemode.Tool

// JavaScriptLimits bound execute_javascript (zero fields: jsrun's defaults).
type JavaScriptLimits = jsrun.Limits

const javaScriptDescription = "Run JavaScript in an isolated sandbox and get back the value of the last expression, JSON-encoded, " +
	"plus what console.log/info/warn/error printed. Use it for calculations (exact arithmetic, math, dates), " +
	"parsing and reshaping JSON or text you already have (filter, sort, group, aggregate), and checking a small algorithm. " +
	"It cannot read or write files, reach the network, run commands, or see anything but the code you pass: " +
	"there is no require/import, fetch, process or setTimeout. Top-level await and return work. " +
	"Limits: %s of wall time by default (timeout_ms may set less), %s of CPU, %s of memory, 30,000 characters of output, 200 console entries, " +
	"strings of 16M characters and arrays of 8M elements. A thrown exception or syntax error comes back as an error with its line. " +
	"The one way out is `tools`: tools.search(query), tools.describe(name) and await tools.call(name, args) reach this server's other tools " +
	"through the same checks as a direct call (read-only tools only, unless the server allows more)."

// javaScriptSchema states the one timeout a script has: the default is
// also the most timeout_ms may ask for (code.timeout).
func javaScriptSchema(timeout time.Duration) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"code":{"type":"string","minLength":1,"maxLength":%d,"description":"JavaScript source (a script, not a module). The value of its last expression statement, or of a top-level return, is the result."},`+
		`"timeout_ms":{"type":"integer","minimum":1,"maximum":%d,"description":"Wall-time limit in milliseconds (default and maximum %d)."}},`+
		`"required":["code"],"additionalProperties":false}`,
		jsrun.MaxSourceLen, timeout.Milliseconds(), timeout.Milliseconds()))
}

// scriptLimits are a script's limits before its timeout_ms: the timeout
// is code.timeout unless the embedding set JavaScript.Timeout.
func (o Options) scriptLimits() jsrun.Limits {
	c := o.Code.withDefaults()
	l := o.JavaScript
	if l.Timeout <= 0 {
		l.Timeout = c.Timeout
	}
	if l.Memory <= 0 {
		l.Memory = c.Memory
	}
	if l.CPU <= 0 {
		l.CPU = c.CPU
	}
	return l
}

func javaScriptTool(o Options) catalog.Tool {
	l := o.scriptLimits()
	return catalog.Tool{
		Provider:    ID,
		Name:        JavaScriptTool,
		Title:       "Run JavaScript in a sandbox",
		Description: fmt.Sprintf(javaScriptDescription, l.Timeout, l.CPU, sizeText(l.Memory)),
		InputSchema: javaScriptSchema(l.Timeout),
		// No side effects by construction: the sandbox reaches nothing outside itself.
		ReadOnly: true,
		// The watchdog ends every run first; this only keeps the pipeline's
		// default deadline from cutting a run short. (A run that queued
		// for its slot has the rest: jsrun stops it at the call's deadline.)
		Timeout: l.Timeout + 2*jsrun.Grace,
	}
}

// sizeText writes a byte count as people read it.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

type javaScriptArgs struct {
	Code      *string         `json:"code"`
	TimeoutMS json.RawMessage `json:"timeout_ms"`
}

func (p *Provider) executeJavaScript(ctx context.Context, raw json.RawMessage, h ScriptHost) (*provider.Result, error) {
	code, timeout, err := p.parseJavaScriptArgs(raw)
	if err != nil {
		return nil, err
	}
	sc := jsrun.Script{Code: code, Limits: p.opts.scriptLimits()}
	if timeout > 0 {
		sc.Limits.Timeout = timeout
	}
	release, err := p.admit(ctx, sc.Limits.Timeout)
	if err != nil {
		return nil, err
	}
	defer release()
	var (
		host jsrun.HostFunc
		srv  *scriptServer
	)
	if h != nil {
		opts := p.opts.Code.withDefaults()
		sc.Kind, sc.Config = scriptKind, mustJSON(scriptConfig{MaxCalls: opts.MaxCalls})
		srv = newScriptServer(h, opts)
		host = srv.serve()
	}
	out, err := p.runner().Run(ctx, sc, host)
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
				fmt.Sprint(p.opts.scriptLimits().Timeout.Milliseconds())+".",
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
	var u uncaught
	if srv != nil && len(je.Host) > 0 && json.Unmarshal(je.Host, &u) == nil && u.Tool != "" {
		if te, ok := srv.issuedError(u); ok && te.Code != toolerr.BackendError {
			// A refusal the script did not catch (DENIED, CONFIRMATION_REQUIRED,
			// PROVIDER_NEEDS_LOGIN, UNKNOWN_TOOL...): the script's answer is
			// that refusal in its own words and code, not "the tool ran and
			// reported a failure".
			out := toolerr.New(te.Code, te.Hint, "the script did not catch a refusal of tools.call(%q): %s", u.Tool, te.Message)
			for k, v := range te.Details {
				out.With(k, v)
			}
			out.With("tool", u.Tool).With("js_error", jsErrorDetails(je))
			if len(je.Console) > 0 {
				out.With("console", je.Console)
			}
			return nil, out
		}
		// A tool's own failure the script did not catch: its envelope, so
		// the model sees the output as for a direct call.
		details["tool"], details["tool_error"] = u.Tool, srv.uncaught(u)
	}
	if len(je.Console) > 0 || je.Truncated {
		details["console"] = je.Console
		details["truncated"] = je.Truncated
	}
	return &provider.Result{Text: je.Error(), IsError: true, Details: details}, nil
}

// admit takes the script's slot (Options.Slots): the caller's identity is
// the call's user (provider.CallerFrom: the bearer token's or the JWT's
// identity over HTTP; "" is this process's one local user, on stdio or
// HTTP without auth). Over a cap, PROVIDER_UNAVAILABLE with retry_after_ms
// and which cap; ctx's error when the call ended while it waited.
func (p *Provider) admit(ctx context.Context, timeout time.Duration) (func(), error) {
	release, err := p.slots.Acquire(ctx, provider.CallerFrom(ctx).User, timeout+2*jsrun.Grace)
	var b *jsrun.Busy
	if !errors.As(err, &b) {
		return release, err
	}
	key, whose := "code.maxConcurrent", "on this server"
	if b.Cap == jsrun.CapPerIdentity {
		key, whose = "code.maxPerIdentity", "for this caller"
	}
	retry := (b.RetryAfter + 99*time.Millisecond).Truncate(100 * time.Millisecond)
	return nil, toolerr.New(toolerr.ProviderUnavailable,
		fmt.Sprintf("Too many scripts are running %s. Retry in %s, or do the work in fewer scripts: one script can make several tool calls (Promise.all).", whose, retry),
		"%s: %d scripts are already running %s, the most at once (%s: %d); waited %s for one to end",
		JavaScriptTool, b.Running, whose, key, b.Limit, b.Waited.Round(time.Millisecond)).
		With("retry_after_ms", retry.Milliseconds()).With("cap", b.Cap).With("limit", b.Limit)
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
	most := p.opts.scriptLimits().Timeout
	bad := func(format string, a ...any) error {
		return toolerr.New(toolerr.InvalidArguments, fmt.Sprintf(`Pass {"code": "<JavaScript>", "timeout_ms"?: <1..%d>}.`, most.Milliseconds()), format, a...).
			With("expected_schema", javaScriptSchema(most))
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
		if err := json.Unmarshal(a.TimeoutMS, &ms); err != nil || ms != math.Trunc(ms) || ms < 1 || ms > float64(most.Milliseconds()) {
			return "", 0, bad("%s: timeout_ms must be an integer from 1 to %d, not %s", JavaScriptTool, most.Milliseconds(), a.TimeoutMS)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	return *a.Code, timeout, nil
}

// runner is where scripts run: Options.Runner, else each in its own
// limited process (jsrun.Isolated).
func (p *Provider) runner() jsrun.Runner {
	if p.opts.Runner != nil {
		return p.opts.Runner
	}
	return jsrun.Isolated()
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
