package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// A script with `tools` is two halves (docs/modes.md, "Code mode"): the
// interpreter's (scriptRun, wherever jsrun runs the script: a child process
// in the server) turns the script's arguments into host calls and the
// answers into values and thrown Errors; the server's (scriptServer) answers
// each host call through the ScriptHost, and keeps the budget and the
// concurrency bound, so nothing the script's process does can lift them.
// Whether a script may call a tool that changes state is the gate's
// decision (policy.Gate), made by the pipeline on the tool it resolves: the
// host marks the script's calls read-only unless code.allowMutations.

// scriptKind is the jsrun installer of execute_javascript's `tools`.
const scriptKind = "execute_javascript"

func init() {
	jsrun.Register(scriptKind, installTools)
	jsrun.RegisterWarmUp(scriptKind, warmUpScript, mustJSON(scriptConfig{MaxCalls: 2}), warmUpHost)
}

// warmUpScript is what a script's process runs before it is handed a
// script (jsrun.RegisterWarmUp): a search, a describe, calls that succeed
// and fail, and the budget's refusal, against warmUpHost.
const warmUpScript = `const [t] = tools.search("warm", {limit: 1}); const d = tools.describe(t.name); ` +
	`const [a] = await Promise.all([tools.call(t.name, {q: "x"}), tools.call("warm_fail", {}).catch(e => e.code)]); ` +
	`try { tools.call(t.name, {}) } catch (e) { a.code = e.code } return [a, d.signature]`

// warmUpHost answers warmUpScript in the child, as a server would.
func warmUpHost(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	tool := ToolInfo{Name: "warm_tool", Description: "A warm-up.", Signature: "warm_tool(args: {q: string}): Promise<any>"}
	var ans any
	switch method {
	case hostSearch:
		ans = []ToolInfo{tool}
	case hostDescribe:
		ans = hostAnswer{Value: mustJSON(tool)}
	case hostCall:
		var p callParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		ans = hostAnswer{Result: &wireResult{Text: `{"ok":true}`}}
		if p.Name == "warm_fail" {
			ans = hostAnswer{Error: wireErr(toolerr.New(toolerr.Denied, "A warm-up.", "refused")), Ref: 1}
		}
	case hostBudget:
		ans = hostAnswer{Error: wireErr(toolerr.New(toolerr.Denied, "A warm-up.", "over budget")), Budget: true, Ref: 2}
	}
	return json.Marshal(ans)
}

// scriptConfig is what the interpreter's half is told.
type scriptConfig struct {
	MaxCalls int `json:"maxCalls"`
}

// Host calls: method names and their parameters. A tool call is one
// request: the server counts it against the budget and runs it, or refuses
// it, and answers once. The interpreter keeps its own count too, so that a
// call past the budget throws at once (as the script's other refusals do):
// it asks the server for that refusal (hostBudget) instead of calling.
const (
	hostSearch   = "search"   // searchParams → []ToolInfo
	hostDescribe = "describe" // nameParams → hostAnswer{Value: ToolInfo}
	hostBudget   = "budget"   // nameParams → hostAnswer{Error, Budget}: the refusal of a call past the budget
	hostCall     = "call"     // callParams → hostAnswer{Result} (or Error; Budget when it was past the budget)
)

type searchParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

type nameParams struct {
	Name string `json:"name"`
}

type callParams struct {
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args"`
	Confirm any             `json:"confirm,omitempty"`
}

// hostAnswer is a host call's outcome.
type hostAnswer struct {
	Value  json.RawMessage `json:"value,omitempty"`
	Result *wireResult     `json:"result,omitempty"`
	Error  *wireToolError  `json:"error,omitempty"`
	// Budget marks the refusal of a call past the script's budget.
	Budget bool `json:"budget,omitempty"`
	// Ref names Error among the server's issued errors (1-based).
	Ref int `json:"ref,omitempty"`
}

// wireResult is a successful call's result (a result the tool marked as an
// error travels as the error the script throws).
type wireResult struct {
	Text string `json:"text"`
}

type wireToolError struct {
	Code    toolerr.Code   `json:"code"`
	Message string         `json:"message"`
	Hint    string         `json:"hint,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

func wireErr(te *toolerr.Error) *wireToolError {
	return &wireToolError{Code: te.Code, Message: te.Message, Hint: te.Hint, Details: te.Details}
}

func (w *wireToolError) toolerr() *toolerr.Error {
	return &toolerr.Error{Code: w.Code, Message: w.Message, Hint: w.Hint, Details: w.Details}
}

// uncaught is the annotation of a failed script: the tool call it did not
// catch.
type uncaught struct {
	Tool      string `json:"tool"`
	ToolError any    `json:"tool_error"`
	Ref       int    `json:"ref,omitempty"`
}

// scriptServer is the server's half of one script.
type scriptServer struct {
	host  ScriptHost
	opts  CodeOptions
	sem   chan struct{}
	mu    sync.Mutex // calls and issued: host calls are served concurrently
	calls int        // tool calls counted against the budget
	// issued are the errors the script was handed, by Ref - 1: a failure
	// reports the server's own copy, not what came back. At most maxIssued
	// are kept (an answer past them has no Ref).
	issued []*toolerr.Error
}

// maxIssued bounds the errors a script's server keeps: a script that
// loops on refusals (or a hostile child asking for them) cannot grow the
// server's memory past it.
const maxIssued = 1024

// issue records te for the script and returns the answer that carries it.
func (r *scriptServer) issue(te *toolerr.Error, budget bool) hostAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := hostAnswer{Error: wireErr(te), Budget: budget}
	if len(r.issued) < maxIssued {
		r.issued = append(r.issued, te)
		a.Ref = len(r.issued)
	}
	return a
}

// uncaught is the server's envelope of the call a failed script did not
// catch (from the script's annotation).
func (r *scriptServer) uncaught(u uncaught) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u.Ref > 0 && u.Ref <= len(r.issued) {
		return r.issued[u.Ref-1].Body()["error"]
	}
	return u.ToolError
}

// issuedError is the server's own copy of the error an uncaught throw
// names (exact code and details), when it issued one.
func (r *scriptServer) issuedError(u uncaught) (*toolerr.Error, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u.Ref > 0 && u.Ref <= len(r.issued) {
		return r.issued[u.Ref-1], true
	}
	return nil, false
}

func newScriptServer(host ScriptHost, opts CodeOptions) *scriptServer {
	return &scriptServer{host: host, opts: opts, sem: make(chan struct{}, opts.Concurrency)}
}

// serve answers one host call. Calls may come concurrently (a script's
// Promise.all): the budget is counted under mu, and a call runs only
// within it, at most Concurrency at once.
func (r *scriptServer) serve() jsrun.HostFunc {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		var ans any
		switch method {
		case hostSearch:
			var p searchParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			if utf8.RuneCountInString(p.Query) > MaxCodeSearchQuery || strings.TrimSpace(p.Query) == "" {
				return nil, errBadQuery
			}
			hits := r.host.Search(ctx, p.Query, max(1, min(p.Limit, MaxCodeSearchLimit)))
			out := make([]ToolInfo, 0, len(hits))
			for _, t := range hits {
				out = append(out, Info(t, false))
			}
			ans = out
		case hostDescribe:
			var p nameParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			t, ok := r.host.Describe(ctx, p.Name)
			if !ok {
				ans = r.issue(toolerr.New(toolerr.UnknownTool, "Find the tool's exact name with tools.search(query).",
					"no tool named %q", p.Name), false)
				break
			}
			b, err := json.Marshal(Info(t, true))
			if err != nil {
				return nil, err
			}
			ans = hostAnswer{Value: b}
		case hostBudget:
			var p nameParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			ans = r.overBudget(p.Name)
		case hostCall:
			var p callParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			if !r.admit() {
				ans = r.overBudget(p.Name)
				break
			}
			ans = r.call(ctx, p)
		default:
			return nil, errUnknownMethod
		}
		return json.Marshal(ans)
	}
}

var (
	errBadQuery      = toolerr.New(toolerr.InvalidArguments, "", "tools.search: the query is empty or too long")
	errUnknownMethod = toolerr.New(toolerr.Denied, "", "an unknown host call")
)

// admit counts a call against the budget: false when it is past it. (No
// read-only check here: a lookup could miss a tool the pipeline then
// resolves, and let it through; the gate decides on the resolved tool.)
func (r *scriptServer) admit() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls >= r.opts.MaxCalls {
		return false
	}
	r.calls++
	return true
}

// overBudget is the refusal of a call to name past the budget. The
// interpreter asks for it when its own count is past the budget (the
// server's may lag: calls are served concurrently), so it is not counted;
// a call past the server's count gets it too.
func (r *scriptServer) overBudget(name string) hostAnswer {
	return r.issue(toolerr.New(toolerr.Denied,
		"The script made more tool calls than one run allows. Do fewer calls per script (search once, then call what you need), or split the work across scripts.",
		"the script exceeded its budget of %d tool calls (call to %q refused)", r.opts.MaxCalls, name).With("budget", r.opts.MaxCalls), true)
}

// call runs one admitted call through the host (the pipeline), at most
// Concurrency at once.
func (r *scriptServer) call(ctx context.Context, p callParams) hostAnswer {
	var (
		res *provider.Result
		err error
	)
	select {
	case r.sem <- struct{}{}:
		res, err = r.host.Call(ctx, p.Name, p.Args, p.Confirm)
		<-r.sem
	case <-ctx.Done():
		err = ctx.Err()
	}
	switch {
	case err != nil:
		return r.issue(codemode.CallError(ctx, p.Name, err, "the script's"), false)
	case res == nil:
		res = &provider.Result{}
	case res.IsError:
		return r.issue(codemode.BackendError(res), false)
	}
	return hostAnswer{Result: &wireResult{Text: res.Text}}
}

// scriptRun is the interpreter's half: the `tools` object. Its state is
// touched on the VM goroutine only.
type scriptRun struct {
	host   *jsrun.Host
	cfg    scriptConfig
	calls  int // tools.call made, as the server counts them
	sess   *jsrun.Session
	vm     *goja.Runtime
	bridge *codemode.Bridge
	refs   map[*toolerr.Error]int // the server's Ref of each error it sent
}

// toolerr is an answer's error, remembered with its Ref.
func (r *scriptRun) toolerr(a hostAnswer) *toolerr.Error {
	te := a.Error.toolerr()
	r.refs[te] = a.Ref
	return te
}

// installTools is the jsrun installer: `tools`, then the script.
func installTools(ctx context.Context, s *jsrun.Session, vm *goja.Runtime, sc *jsrun.Script, host *jsrun.Host) (goja.Value, error) {
	r := &scriptRun{host: host, sess: s, vm: vm, refs: map[*toolerr.Error]int{}}
	if err := json.Unmarshal(sc.Config, &r.cfg); err != nil {
		return nil, err
	}
	b, err := codemode.NewBridge(vm)
	if err != nil {
		return nil, err
	}
	r.bridge = b
	s.Annotate(func(je *jsrun.Error) json.RawMessage {
		t, ok := r.bridge.Find(je.Thrown())
		if !ok || je.Thrown() == nil {
			return nil
		}
		out, _ := json.Marshal(uncaught{Tool: t.Tool, ToolError: t.Err.Body()["error"], Ref: r.refs[t.Err]})
		return out
	})
	tools := vm.NewObject()
	for k, v := range map[string]any{
		"call":     r.call(ctx),
		"search":   r.search(ctx),
		"describe": r.describe(ctx),
		"maxCalls": r.cfg.MaxCalls,
	} {
		if err := tools.DefineDataProperty(k, vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
	}
	if err := vm.GlobalObject().DefineDataProperty("tools", tools, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return nil, err
	}
	return jsrun.RunMain(s, vm, sc.Code)
}

// ask makes a host call from the VM goroutine; a broken call throws.
func (r *scriptRun) ask(ctx context.Context, method string, params any, out any) {
	if err := r.host.Call(ctx, method, params, out); err != nil {
		if te, ok := toolerr.As(err); ok {
			panic(r.vm.NewTypeError(te.Message))
		}
		panic(r.vm.NewGoError(err))
	}
}

// parse turns JSON into plain JS values.
func (r *scriptRun) parse(b []byte) goja.Value {
	v, err := r.bridge.Parse(string(b))
	if err != nil {
		panic(err)
	}
	return v
}

func (r *scriptRun) search(ctx context.Context) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		q := c.Argument(0)
		if !goja.IsString(q) || strings.TrimSpace(q.String()) == "" {
			panic(r.vm.NewTypeError("tools.search(query, {limit}): query must be a non-empty string describing the capability you need"))
		}
		if n := utf8.RuneCountInString(q.String()); n > MaxCodeSearchQuery {
			panic(r.vm.NewTypeError("tools.search(query, {limit}): the query has %d characters; describe the capability in at most %d", n, MaxCodeSearchQuery))
		}
		limit := DefaultCodeSearchLimit
		if o, ok := c.Argument(1).(*goja.Object); ok {
			if l := o.Get("limit"); l != nil && !goja.IsUndefined(l) {
				limit = int(max(-1, min(l.ToInteger(), MaxCodeSearchLimit)))
			}
		}
		limit = max(1, min(limit, MaxCodeSearchLimit))
		var out json.RawMessage
		r.ask(ctx, hostSearch, searchParams{Query: q.String(), Limit: limit}, &out)
		return r.parse(out)
	}
}

func (r *scriptRun) describe(ctx context.Context) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		name := r.bridge.Name("tools.describe", c.Argument(0))
		var a hostAnswer
		r.ask(ctx, hostDescribe, nameParams{Name: name}, &a)
		if a.Error != nil {
			r.bridge.Throw(name, r.toolerr(a), false)
		}
		return r.parse(a.Value)
	}
}

// call is tools.call(name, args, {confirm}): a Promise settled when the
// server answers. Refusals the script can know of before calling (a bad
// argument, the budget) throw at once; the call itself is one request,
// written before tools.call returns.
func (r *scriptRun) call(ctx context.Context) func(goja.FunctionCall) goja.Value {
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
		if r.calls >= r.cfg.MaxCalls {
			var a hostAnswer
			r.ask(ctx, hostBudget, nameParams{Name: name}, &a)
			if a.Error != nil {
				r.bridge.Throw(name, r.toolerr(a), a.Budget)
			}
			panic(r.vm.NewGoError(errors.New("tools.call: the server did not refuse a call past the budget")))
		}
		r.calls++
		p, resolve, reject := r.vm.NewPromise()
		r.host.Start(ctx, r.sess, hostCall, callParams{Name: name, Args: json.RawMessage(raw), Confirm: confirm}, func(b json.RawMessage, err error) error {
			var (
				a   hostAnswer
				res *provider.Result
			)
			if err == nil {
				err = json.Unmarshal(b, &a)
			}
			switch {
			case err != nil:
			case a.Error != nil:
				if a.Budget {
					return reject(r.bridge.Error(name, r.toolerr(a), true))
				}
				err = r.toolerr(a)
			case a.Result != nil:
				res = &provider.Result{Text: a.Result.Text}
			}
			v, thrown := r.bridge.Settle(name, res, err, func(err error) *toolerr.Error {
				return codemode.CallError(ctx, name, err, "the script's")
			})
			if thrown != nil {
				return reject(thrown)
			}
			return resolve(v)
		})
		return r.vm.ToValue(p)
	}
}
