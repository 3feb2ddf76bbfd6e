package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/skills"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Code-mode defaults (docs/modes.md, "Code mode").
const (
	DefaultCodeMaxCalls    = 50
	DefaultCodeConcurrency = 4
	DefaultCodeTimeout     = 30 * time.Second
	// DefaultCodeSearchLimit is how many hits tools.search returns by default.
	DefaultCodeSearchLimit = 5
	// MaxCodeSearchLimit bounds tools.search's limit.
	MaxCodeSearchLimit = 20
)

// CodeOptions bound the tool calls of one execute_javascript script.
type CodeOptions struct {
	// MaxCalls bounds tools.call per script (0: DefaultCodeMaxCalls).
	MaxCalls int
	// Concurrency bounds the tool calls in flight at once, as Promise.all
	// starts them (0: DefaultCodeConcurrency).
	Concurrency int
	// AllowMutations lets scripts call tools that change state (they still
	// need confirmation as any call does). False: such a call throws DENIED
	// inside the script.
	AllowMutations bool
	// Timeout is the wall time of a script that has `tools` when the call
	// sets no timeout_ms (0: DefaultCodeTimeout): tool calls take longer
	// than arithmetic.
	Timeout time.Duration
}

func (o CodeOptions) withDefaults() CodeOptions {
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultCodeMaxCalls
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultCodeConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultCodeTimeout
	}
	return o
}

// ToolInfo is what tools.search and tools.describe tell a script of a tool.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Signature   string          `json:"signature"`
	ReadOnly    bool            `json:"readOnly"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// Info describes t for a script; withSchema adds its input schema.
func Info(t catalog.Tool, withSchema bool) ToolInfo {
	i := ToolInfo{Name: t.Canonical, Description: t.Description, ReadOnly: t.ReadOnly,
		Signature: Signature(t.Canonical, t.InputSchema, t.OutputSchema)}
	if withSchema {
		i.InputSchema = t.InputSchema
	}
	return i
}

// ScriptHost is what the runtime lends a script's `tools` object: search and
// describe over the tools the caller may see, and calls back through the
// call pipeline (policy, validation, loop guard, confirmation, audit with
// the script's call as parent). The facade attaches one to the context of
// every execute_javascript call; without one, scripts have no `tools`.
type ScriptHost interface {
	Search(ctx context.Context, query string, limit int) []catalog.Tool
	Describe(ctx context.Context, name string) (catalog.Tool, bool)
	// Call runs one tool call; confirm is nil, true, or a confirm token.
	Call(ctx context.Context, name string, args json.RawMessage, confirm any) (*provider.Result, error)
}

type hostKey struct{}

// WithScriptHost returns ctx carrying h for execute_javascript.
func WithScriptHost(ctx context.Context, h ScriptHost) context.Context {
	return context.WithValue(ctx, hostKey{}, h)
}

func scriptHostFrom(ctx context.Context) ScriptHost {
	h, _ := ctx.Value(hostKey{}).(ScriptHost)
	return h
}

// CodeAPI documents the `tools` object for tool descriptions and help.
const CodeAPI = "In the script, `tools.search(query, {limit})` returns matching tools as [{name, description, signature, readOnly}]; " +
	"`tools.describe(name)` returns one with its inputSchema; `await tools.call(name, args, {confirm})` calls it through the same checks as a direct call " +
	"and returns its result (parsed JSON when the result is JSON), or throws an Error with code, message, hint and correct_shape. " +
	"Run independent calls together with Promise.all. Only what the script returns and prints comes back, so filter and combine results in the script."

// scriptRun is one script's `tools`: its state is touched on the VM
// goroutine only, except the semaphore.
type scriptRun struct {
	host   ScriptHost
	opts   CodeOptions
	sess   *jsrun.Session
	bridge *skills.Bridge
	calls  int
	sem    chan struct{}
}

func (p *Provider) installTools(host ScriptHost) (*scriptRun, jsrun.Setup) {
	r := &scriptRun{host: host, opts: p.opts.Code.withDefaults()}
	r.sem = make(chan struct{}, r.opts.Concurrency)
	return r, func(ctx context.Context, s *jsrun.Session, vm *goja.Runtime) error {
		b, err := skills.NewBridge(vm)
		if err != nil {
			return err
		}
		r.sess, r.bridge = s, b
		tools := vm.NewObject()
		for k, v := range map[string]any{
			"call":     r.call(ctx, vm),
			"search":   r.search(ctx, vm),
			"describe": r.describe(ctx, vm),
		} {
			if err := tools.DefineDataProperty(k, vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
				return err
			}
		}
		if err := tools.DefineDataProperty("maxCalls", vm.ToValue(r.opts.MaxCalls), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
		return vm.GlobalObject().DefineDataProperty("tools", tools, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
}

// toJS turns a Go value into plain JS objects (through JSON, so scripts get
// ordinary objects and arrays rather than wrapped Go values).
func (r *scriptRun) toJS(v any) goja.Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	out, err := r.bridge.Parse(string(b))
	if err != nil {
		panic(err)
	}
	return out
}

func (r *scriptRun) search(ctx context.Context, vm *goja.Runtime) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		q := c.Argument(0)
		if !goja.IsString(q) || strings.TrimSpace(q.String()) == "" {
			panic(vm.NewTypeError("tools.search(query, {limit}): query must be a non-empty string describing the capability you need"))
		}
		limit := DefaultCodeSearchLimit
		if o, ok := c.Argument(1).(*goja.Object); ok {
			if l := o.Get("limit"); l != nil && !goja.IsUndefined(l) {
				limit = int(l.ToInteger())
			}
		}
		limit = max(1, min(limit, MaxCodeSearchLimit))
		hits := r.host.Search(ctx, q.String(), limit)
		out := make([]ToolInfo, 0, len(hits))
		for _, t := range hits {
			out = append(out, Info(t, false))
		}
		return r.toJS(out)
	}
}

func (r *scriptRun) describe(ctx context.Context, vm *goja.Runtime) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		name := r.bridge.Name("tools.describe", c.Argument(0))
		t, ok := r.host.Describe(ctx, name)
		if !ok {
			r.bridge.Throw(name, toolerr.New(toolerr.UnknownTool, "Find the tool's exact name with tools.search(query).",
				"no tool named %q", name), false)
		}
		return r.toJS(Info(t, true))
	}
}

// call is tools.call(name, args, {confirm}): a Promise settled when the
// pipeline answers. Refusals the script can know of before calling (a bad
// argument, the budget, a mutating tool while mutations are off) throw at
// once.
func (r *scriptRun) call(ctx context.Context, vm *goja.Runtime) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		name := r.bridge.Name("tools.call", c.Argument(0))
		raw := r.bridge.Args("tools.call", c.Argument(1))
		var confirm any
		if o, ok := c.Argument(2).(*goja.Object); ok {
			switch v := o.Get("confirm"); {
			case v == nil || goja.IsUndefined(v) || goja.IsNull(v):
			case goja.IsString(v):
				confirm = v.String()
			default:
				confirm = v.ToBoolean()
			}
		}
		r.calls++
		if r.calls > r.opts.MaxCalls {
			r.bridge.Throw(name, toolerr.New(toolerr.Denied,
				"The script made more tool calls than one run allows. Do fewer calls per script (search once, then call what you need), or split the work across scripts.",
				"the script exceeded its budget of %d tool calls (call to %q refused)", r.opts.MaxCalls, name).With("budget", r.opts.MaxCalls), true)
		}
		// Whether the script may call a tool that changes state is the
		// gate's decision, made by the pipeline on the tool it resolves
		// (the host marks the call read-only): a lookup here could miss a
		// tool the pipeline then finds, and let it through.
		p, resolve, reject := vm.NewPromise()
		r.sess.Go(func() func() error {
			var (
				res *provider.Result
				err error
			)
			select {
			case r.sem <- struct{}{}:
				res, err = r.host.Call(ctx, name, json.RawMessage(raw), confirm)
				<-r.sem
			case <-ctx.Done():
				err = ctx.Err()
			}
			return func() error {
				v, thrown := r.bridge.Settle(name, res, err, func(err error) *toolerr.Error {
					return skills.CallError(ctx, name, err, "the script's")
				})
				if thrown != nil {
					return reject(thrown)
				}
				return resolve(v)
			}
		})
		return vm.ToValue(p)
	}
}

// toolErrorOf is the envelope of a tool call the script did not catch.
func (r *scriptRun) toolErrorOf(je *jsrun.Error) (skills.Thrown, bool) {
	if r == nil || r.bridge == nil || je.Thrown() == nil {
		return skills.Thrown{}, false
	}
	return r.bridge.Find(je.Thrown())
}
