package skills

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/dop251/goja"

	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// A skill run is two halves: this file's installer runs the skill's file
// and its run(tools, args) wherever jsrun runs scripts (a child process in
// the server); tools.call and tools.canonical are host calls that the
// server's runner (run.go) answers through the pipeline, keeping the budget.

// skillKind is the jsrun installer of skills.
const skillKind = "skill"

func init() { jsrun.Register(skillKind, installSkill) }

var promiseType = reflect.TypeFor[*goja.Promise]()

// skillConfig is what the interpreter's half is told.
type skillConfig struct {
	Skill    string          `json:"skill"`
	Provider string          `json:"provider"`
	Args     json.RawMessage `json:"args"`
}

// Host calls.
const (
	hostCall      = "call"      // nameArgs → answer{Name, Result | Error, Budget}
	hostCanonical = "canonical" // nameArgs → answer{Name | Message}
)

type nameArgs struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// answer is a host call's outcome; Name is the tool's canonical name (an
// own name resolved).
type answer struct {
	Name    string      `json:"name,omitempty"`
	Result  *wireResult `json:"result,omitempty"`
	Error   *wireError  `json:"error,omitempty"`
	Budget  bool        `json:"budget,omitempty"`
	Message string      `json:"message,omitempty"`
	// Ref names Error among the server's issued errors (1-based).
	Ref int `json:"ref,omitempty"`
}

// wireResult is a successful call's result (a result the tool marked as an
// error travels as the error the script throws).
type wireResult struct {
	Text string `json:"text"`
}

// wireError is a *toolerr.Error crossing the process boundary.
type wireError struct {
	Code    toolerr.Code   `json:"code"`
	Message string         `json:"message"`
	Hint    string         `json:"hint,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

func toWire(te *toolerr.Error) *wireError {
	return &wireError{Code: te.Code, Message: te.Message, Hint: te.Hint, Details: te.Details}
}

func (w *wireError) toolerr() *toolerr.Error {
	return &toolerr.Error{Code: w.Code, Message: w.Message, Hint: w.Hint, Details: w.Details}
}

// skillFailure is a failed run's annotation: the tool call the skill did
// not catch, or the error it threw on purpose.
type skillFailure struct {
	Thrown   *thrownWire `json:"thrown,omitempty"`
	Declared *wireError  `json:"declared,omitempty"`
}

type thrownWire struct {
	Tool   string     `json:"tool"`
	Error  *wireError `json:"error"`
	Budget bool       `json:"budget,omitempty"`
	Ref    int        `json:"ref,omitempty"`
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// skillRun is the interpreter's half of one run, on the VM goroutine.
type skillRun struct {
	cfg    skillConfig
	host   *jsrun.Host
	vm     *goja.Runtime
	bridge *codemode.Bridge // the JS side of tools.call
	// declared is the code and hint of an error the skill threw on purpose.
	declared *toolerr.Error
	refs     map[*toolerr.Error]int // the server's Ref of each error it sent
}

// installSkill runs the file's top level, then run(tools, args).
func installSkill(ctx context.Context, s *jsrun.Session, vm *goja.Runtime, sc *jsrun.Script, host *jsrun.Host) (goja.Value, error) {
	r := &skillRun{host: host, vm: vm, refs: map[*toolerr.Error]int{}}
	if err := json.Unmarshal(sc.Config, &r.cfg); err != nil {
		return nil, err
	}
	s.Annotate(r.annotate)
	prg, err := jsrun.Compile(sc.Name, sc.Code)
	if err != nil {
		return nil, err
	}
	// Capture the built-ins before the skill's code can replace them.
	b, err := codemode.NewBridge(vm)
	if err != nil {
		return nil, err
	}
	r.bridge = b
	argv, err := b.Parse(string(r.cfg.Args))
	if err != nil {
		return nil, err
	}
	tools := vm.NewObject()
	for k, v := range map[string]any{
		"call":      r.call(ctx),
		"canonical": r.canonical(ctx),
		"provider":  r.cfg.Provider,
	} {
		if err := tools.DefineDataProperty(k, vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
	}
	if _, err := vm.RunProgram(prg); err != nil {
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
			r.declare(ex.Value())
		}
		return nil, err
	}
	if o, ok := v.(*goja.Object); ok && o.ExportType() == promiseType {
		if p, ok := o.Export().(*goja.Promise); ok && p.State() == goja.PromiseStateRejected {
			r.declare(p.Result())
		}
	}
	return v, nil
}

// annotate tells the server what failed: a tool call the skill did not
// catch, or an error it declared.
func (r *skillRun) annotate(je *jsrun.Error) json.RawMessage {
	var f skillFailure
	if th := je.Thrown(); th != nil && r.bridge != nil {
		if t, ok := r.bridge.Find(th); ok {
			f.Thrown = &thrownWire{Tool: t.Tool, Error: toWire(t.Err), Budget: t.Budget, Ref: r.refs[t.Err]}
		} else if r.declared == nil {
			r.declare(th) // a rejection the body did not see (an awaited Promise)
		}
	}
	if r.declared != nil {
		f.Declared = toWire(r.declared)
	}
	if f.Thrown == nil && f.Declared == nil {
		return nil
	}
	return mustJSON(f)
}

// declare records an error the skill threw on purpose: an Error whose
// `code` is one of skillCodes, with an optional `hint`.
func (r *skillRun) declare(v goja.Value) {
	defer func() { _ = recover() }() // a hostile getter; the generic failure stands
	o, ok := v.(*goja.Object)
	if !ok || !r.vm.InstanceOf(o, r.bridge.ErrorCtor()) {
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
	r.declared = toolerr.New(code, hint, "skill %q: %s", r.cfg.Skill, str(o.Get("message")))
}

func str(v goja.Value) string {
	if v == nil || !goja.IsString(v) {
		return ""
	}
	return v.String()
}

// ask makes a host call; a broken call throws.
func (r *skillRun) ask(ctx context.Context, method string, p nameArgs) answer {
	var a answer
	if err := r.host.Call(ctx, method, p, &a); err != nil {
		panic(r.vm.NewGoError(err))
	}
	return a
}

// call is tools.call(name, args).
func (r *skillRun) call(ctx context.Context) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		name := r.bridge.Name("tools.call", c.Argument(0))
		raw := r.bridge.Args("tools.call", c.Argument(1))
		a := r.ask(ctx, hostCall, nameArgs{Name: name, Args: json.RawMessage(raw)})
		if a.Name != "" {
			name = a.Name
		}
		var err error
		if a.Error != nil {
			te := a.Error.toolerr()
			r.refs[te] = a.Ref
			if a.Budget {
				r.bridge.Throw(name, te, true)
			}
			err = te
		}
		var res *provider.Result
		if a.Result != nil {
			res = &provider.Result{Text: a.Result.Text}
		}
		return r.bridge.Outcome(name, res, err, func(err error) *toolerr.Error { return codemode.CallError(ctx, name, err, "the skill's") })
	}
}

// canonical is tools.canonical(toolName): the canonical name of a tool of
// the skill's own provider.
func (r *skillRun) canonical(ctx context.Context) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		n := c.Argument(0)
		if !goja.IsString(n) {
			panic(r.vm.NewTypeError("tools.canonical(name): name must be a string"))
		}
		a := r.ask(ctx, hostCanonical, nameArgs{Name: n.String()})
		if a.Message != "" {
			panic(r.vm.NewTypeError(a.Message))
		}
		return r.vm.ToValue(a.Name)
	}
}
