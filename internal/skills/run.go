package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

var promiseType = reflect.TypeFor[*goja.Promise]()

// skillCodes are the envelope codes a skill may fail with on purpose.
var skillCodes = map[string]toolerr.Code{}

func init() {
	for _, c := range []toolerr.Code{toolerr.InvalidArguments, toolerr.BackendError, toolerr.ProviderUnavailable,
		toolerr.Denied, toolerr.Timeout, toolerr.ConfirmationRequired} {
		skillCodes[string(c)] = c
	}
}

// RunSkill runs one skill with a fresh sandbox. Failures are *toolerr.Error
// (or the context's error when the caller went away).
func (d *Dir) RunSkill(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error) {
	d.mu.Lock()
	d.scanLocked(ctx)
	var sk *Skill
	for _, e := range d.entries {
		if d.activeLocked(e) && e.name == name {
			sk = e.skill
		}
	}
	if sk == nil {
		err := d.unknownSkill(name)
		d.mu.Unlock()
		return nil, err
	}
	d.mu.Unlock()

	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, toolerr.New(toolerr.InvalidArguments, "Pass the skill's arguments as a JSON object (see `args` in discover).",
			"the arguments of skill %q must be a JSON object", name)
	}
	r := &runner{d: d, skill: name, tools: tools, max: d.opts.MaxCalls}
	sess, err := jsrun.NewSession(sk.file, jsrun.Limits{Timeout: d.opts.Timeout, MaxOutput: d.opts.MaxOutput})
	if err != nil {
		return nil, toolerr.New(toolerr.BackendError, "", "skill %q: %v", name, err)
	}
	start := time.Now()
	out, err := sess.Exec(ctx, func(ctx context.Context, vm *goja.Runtime) (goja.Value, error) {
		return r.body(ctx, vm, sk, args)
	})
	d.log.Debug("skill ran", "skill", name, "calls", r.calls, "duration", time.Since(start), "ok", err == nil)
	if err != nil {
		// A tool call cut by the skill's deadline fails before the watchdog
		// fires: that is still the skill's timeout.
		return nil, r.failure(err, time.Since(start) >= d.opts.Timeout)
	}
	for _, e := range out.Console {
		d.log.Debug("skill console", "skill", name, "level", e.Level, "text", e.Text)
	}
	return result(out), nil
}

// result turns the skill's return value into a Result.
func result(out *jsrun.Output) *provider.Result {
	res := &provider.Result{}
	var s string
	switch {
	case out.Truncated && json.Unmarshal(out.Result, &s) == nil:
		// Result holds the cut JSON text; a cut string value reads better unquoted.
		res.Text = s
		if strings.HasPrefix(s, `"`) {
			for i := len(s); i > 0 && i > len(s)-8; i-- {
				var u string
				if json.Unmarshal([]byte(s[:i]+`"`), &u) == nil {
					res.Text = u
					break
				}
			}
		}
	case len(out.Result) > 0 && out.Result[0] == '"' && json.Unmarshal(out.Result, &s) == nil:
		res.Text = s
	default:
		res.Text = string(out.Result)
		if !out.Truncated && len(out.Result) > 0 && out.Result[0] == '{' {
			var m map[string]any
			if json.Unmarshal(out.Result, &m) == nil {
				res.Structured = m
			}
		}
	}
	if out.Truncated {
		res.Text += "\n[result truncated: the skill returned more than fits; ask it for less]"
	}
	return res
}

// runner is one run's state. Its fields are touched only on the VM
// goroutine until Exec returns.
type runner struct {
	d     *Dir
	skill string
	tools provider.ToolCaller
	max   int
	calls int

	bridge *Bridge // the JS side of tools.call (bridge.go)
	// declared is the code and hint of an error the skill threw on purpose.
	declared *toolerr.Error
	own      map[string]bool // the provider's own tool names, loaded on the first call
}

// body runs on the VM goroutine: the file's top level, then run(tools, args).
func (r *runner) body(ctx context.Context, vm *goja.Runtime, sk *Skill, args json.RawMessage) (goja.Value, error) {
	// Capture the built-ins before the skill's code can replace them.
	b, err := NewBridge(vm)
	if err != nil {
		return nil, err
	}
	r.bridge = b
	argv, err := b.Parse(string(args))
	if err != nil {
		return nil, err
	}
	tools := vm.NewObject()
	for k, v := range map[string]any{
		"call":      r.call(ctx, vm),
		"canonical": r.canonical(vm),
		"provider":  r.d.info.ID,
	} {
		if err := tools.DefineDataProperty(k, vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
	}
	if _, err := vm.RunProgram(sk.program); err != nil {
		return nil, err
	}
	fnv, err := vm.RunString(`typeof run === "function" ? run : undefined`)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return nil, &jsrun.Error{Kind: jsrun.KindException, Message: "TypeError: the skill no longer defines a run function"}
	}
	v, err := fn(goja.Undefined(), tools, argv)
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			r.declare(vm, ex.Value())
		}
		return nil, err
	}
	if o, ok := v.(*goja.Object); ok && o.ExportType() == promiseType {
		if p, ok := o.Export().(*goja.Promise); ok && p.State() == goja.PromiseStateRejected {
			r.declare(vm, p.Result())
		}
	}
	return v, nil
}

// declare records an error the skill threw on purpose: an Error whose
// `code` is one of skillCodes, with an optional `hint`.
func (r *runner) declare(vm *goja.Runtime, v goja.Value) {
	defer func() { _ = recover() }() // a hostile getter; the generic failure stands
	o, ok := v.(*goja.Object)
	if !ok || !vm.InstanceOf(o, r.bridge.ErrorCtor()) {
		return
	}
	if _, ours := r.bridge.Find(o); ours {
		return
	}
	code, ok := skillCodes[str(o.Get("code"))]
	if !ok {
		return
	}
	hint := str(o.Get("hint"))
	if hint == "" {
		hint = "The skill refused the call; read the message, fix the arguments, then retry."
	}
	r.declared = toolerr.New(code, hint, "skill %q: %s", r.skill, str(o.Get("message")))
}

func str(v goja.Value) string {
	if v == nil || !goja.IsString(v) {
		return ""
	}
	return v.String()
}

// call is tools.call(name, args).
func (r *runner) call(ctx context.Context, vm *goja.Runtime) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		name := r.bridge.Name("tools.call", c.Argument(0))
		raw := r.bridge.Args("tools.call", c.Argument(1))
		name = r.resolve(ctx, name)
		r.calls++
		if r.max >= 0 && r.calls > r.max {
			te := toolerr.New(toolerr.BackendError,
				"The skill made more tool calls than one run allows; it likely loops. Report it, or do the task with individual calls.",
				"skill %q exceeded its budget of %d tool calls (call to %q refused)", r.skill, r.max, name).
				With("budget", r.max)
			r.bridge.Throw(name, te, true)
		}
		res, err := r.tools.CallTool(ctx, name, json.RawMessage(raw))
		return r.bridge.Outcome(name, res, err, func(err error) *toolerr.Error { return CallError(ctx, name, err, "the skill's") })
	}
}

// resolve maps an own tool name of the skill's provider to its canonical
// name (the seed's adapter.call took own names); other names pass as they are.
func (r *runner) resolve(ctx context.Context, name string) string {
	if r.d.opts.OwnTools == nil {
		return name
	}
	if r.own == nil {
		r.own = map[string]bool{}
		if tools, err := r.d.opts.OwnTools(ctx); err == nil {
			for _, t := range tools {
				r.own[t.Name] = true
			}
		}
	}
	if !r.own[name] {
		return name
	}
	if c, err := r.toolCanonical(name); err == nil {
		return c
	}
	return name
}

// toolCanonical is an own tool's canonical name.
func (r *runner) toolCanonical(name string) (string, error) {
	if r.d.opts.Canonical != nil {
		return r.d.opts.Canonical(name)
	}
	return naming.Canonical(r.d.info.ID, name, r.d.info.HostLocal)
}

// CallError turns a ToolCaller's error into an envelope; whose names the
// deadline in messages ("the skill's").
func CallError(ctx context.Context, name string, err error, whose string) *toolerr.Error {
	if te, ok := toolerr.As(err); ok {
		return te
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return toolerr.New(toolerr.Timeout, "", "call to %q did not finish before %s deadline", name, whose)
	case errors.Is(err, context.Canceled):
		return toolerr.New(toolerr.Cancelled, "", "call to %q was cancelled", name)
	}
	return toolerr.New(toolerr.BackendError, "", "call to %q failed: %v", name, err)
}

// backendError mirrors the pipeline's envelope for a tool's own failure.
func backendError(res *provider.Result) *toolerr.Error {
	e := toolerr.New(toolerr.BackendError, "The tool ran and reported a failure; read `output`.", "the tool reported an error")
	for k, v := range res.Details {
		e.With(k, v)
	}
	return e.With("output", res.Text)
}

// canonical is tools.canonical(toolName): the canonical name of a tool of
// the skill's own provider.
func (r *runner) canonical(vm *goja.Runtime) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		n := c.Argument(0)
		if !goja.IsString(n) {
			panic(vm.NewTypeError("tools.canonical(name): name must be a string"))
		}
		s, err := r.toolCanonical(n.String())
		if err != nil {
			panic(vm.NewTypeError(err.Error()))
		}
		return vm.ToValue(s)
	}
}

// failure maps a failed run to the error run_skill returns.
func (r *runner) failure(err error, expired bool) error {
	var je *jsrun.Error
	if !errors.As(err, &je) {
		return toolerr.New(toolerr.BackendError, "", "skill %q failed: %v", r.skill, err)
	}
	withConsole := func(te *toolerr.Error) *toolerr.Error {
		te.With("tool_calls", r.calls)
		if n := len(je.Console); n > 0 {
			tail := je.Console
			if n > 20 {
				tail = tail[n-20:]
			}
			te.With("console", tail)
		}
		return te
	}
	switch {
	case je.Kind == jsrun.KindTimeout, expired && je.Kind != jsrun.KindCancelled:
		return withConsole(toolerr.New(toolerr.Timeout,
			"The skill did not finish in time. Do not retry it unchanged: narrow its arguments, or do the task with individual calls.",
			"skill %q did not finish within %s", r.skill, r.d.opts.Timeout))
	case je.Kind == jsrun.KindCancelled:
		return withConsole(toolerr.New(toolerr.Cancelled, "The call was cancelled by the client.", "skill %q was cancelled", r.skill))
	}
	if th := je.Thrown(); th != nil && r.bridge != nil {
		if t, ok := r.bridge.Find(th); ok {
			return withConsole(r.toolFailure(t))
		}
	}
	if r.declared != nil {
		return withConsole(r.declared)
	}
	te := toolerr.New(toolerr.BackendError,
		"The skill itself failed: check its arguments against `args` in discover; if they are right, the skill has a bug: report it.",
		"skill %q failed: %s", r.skill, je.Error())
	if je.Line > 0 {
		te.With("line", je.Line).With("column", je.Column)
	}
	if je.Stack != "" {
		te.With("stack", je.Stack)
	}
	return withConsole(te)
}

// toolFailure is the skill's failure when one of its tool calls failed and
// the skill did not catch it: the tool's code, with the tool's envelope.
func (r *runner) toolFailure(t Thrown) *toolerr.Error {
	if t.Budget {
		return t.Err
	}
	hint := "The skill stopped because one of its tool calls failed; read tool_error. Do not retry the skill unchanged."
	if t.Err.Code == toolerr.ConfirmationRequired {
		hint = "A tool this skill calls changes state. If the user wants this change, repeat the run_skill call with confirm: true."
	}
	return toolerr.New(t.Err.Code, hint, "skill %q: call to %q failed: %s", r.skill, t.Tool, t.Err.Message).
		With("tool", t.Tool).
		With("tool_error", t.Err.Body()["error"])
}
