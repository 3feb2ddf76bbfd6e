package codemode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Bridge is the JavaScript side of tools.call, shared by skills and by
// execute_javascript's code mode: it turns a script's arguments into JSON, a
// pipeline result into a JS value, and a pipeline failure into a thrown JS
// Error that carries the envelope. The call itself is the host's
// provider.ToolCaller (the pipeline): there is one call path.
//
// A Bridge captures JSON.parse, JSON.stringify and Error when it is made, so
// a script that replaces them cannot change what the bridge does. It is used
// on the VM goroutine only.
type Bridge struct {
	vm               *goja.Runtime
	parse, stringify goja.Callable
	errorCtor        *goja.Object
	thrown           []Thrown
}

// Thrown is an error the bridge threw into the script.
type Thrown struct {
	Obj  *goja.Object
	Tool string
	Err  *toolerr.Error
	// Budget marks the refusal of a call past the run's budget.
	Budget bool
}

// NewBridge captures the VM's built-ins; call it before any user code runs.
func NewBridge(vm *goja.Runtime) (*Bridge, error) {
	b := &Bridge{vm: vm}
	jsonObj := vm.Get("JSON").ToObject(vm)
	b.parse, _ = goja.AssertFunction(jsonObj.Get("parse"))
	b.stringify, _ = goja.AssertFunction(jsonObj.Get("stringify"))
	b.errorCtor = vm.Get("Error").ToObject(vm)
	if b.parse == nil || b.stringify == nil {
		return nil, errors.New("the sandbox lacks JSON")
	}
	return b, nil
}

// Parse is the captured JSON.parse.
func (b *Bridge) Parse(s string) (goja.Value, error) {
	return b.parse(goja.Undefined(), b.vm.ToValue(s))
}

// ErrorCtor is the captured Error constructor.
func (b *Bridge) ErrorCtor() *goja.Object { return b.errorCtor }

// Name reads a call's tool name (a TypeError when it is not a string).
func (b *Bridge) Name(fn string, v goja.Value) string {
	if !goja.IsString(v) {
		panic(b.vm.NewTypeError(fn + "(name, args): name must be a tool's canonical name (a string)"))
	}
	return v.String()
}

// Args encodes a call's arguments as a JSON object ("{}" for undefined or
// null); anything but a plain object is a TypeError.
func (b *Bridge) Args(fn string, a goja.Value) string {
	if a == nil || goja.IsUndefined(a) || goja.IsNull(a) {
		return "{}"
	}
	if _, isObj := a.(*goja.Object); !isObj {
		panic(b.vm.NewTypeError(fn + "(name, args): args must be an object"))
	}
	s, err := b.stringify(goja.Undefined(), a)
	if err != nil {
		panic(err)
	}
	raw := s.String()
	if !strings.HasPrefix(raw, "{") {
		panic(b.vm.NewTypeError(fn + "(name, args): args must be a plain object"))
	}
	return raw
}

// Value is a successful call's value: the result's JSON text parsed when it
// is an object or array (a scalar text such as a long id stays a string).
func (b *Bridge) Value(res *provider.Result) goja.Value {
	if res == nil {
		res = &provider.Result{}
	}
	text := strings.TrimSpace(res.Text)
	if (strings.HasPrefix(text, "{") || strings.HasPrefix(text, "[")) && json.Valid([]byte(text)) {
		if v, err := b.Parse(text); err == nil {
			return v
		}
	}
	return b.vm.ToValue(res.Text)
}

// Outcome maps what the ToolCaller returned to a value, or throws the
// failure (an error, or a result the tool marked as an error).
func (b *Bridge) Outcome(name string, res *provider.Result, err error, asEnvelope func(error) *toolerr.Error) goja.Value {
	if err != nil {
		b.Throw(name, asEnvelope(err), false)
	}
	if res != nil && res.IsError {
		b.Throw(name, BackendError(res), false)
	}
	return b.Value(res)
}

// Settle is Outcome for a call that settles a Promise: the value, or the
// Error object to reject it with.
func (b *Bridge) Settle(name string, res *provider.Result, err error, asEnvelope func(error) *toolerr.Error) (goja.Value, *goja.Object) {
	if err != nil {
		return nil, b.Error(name, asEnvelope(err), false)
	}
	if res != nil && res.IsError {
		return nil, b.Error(name, BackendError(res), false)
	}
	return b.Value(res), nil
}

// Throw raises the Error that Error makes.
func (b *Bridge) Throw(tool string, te *toolerr.Error, budget bool) {
	panic(b.Error(tool, te, budget))
}

// Error makes a JS Error carrying the envelope: message, code, tool,
// envelope (the {"error": {...}} body) and, when the pipeline gave them,
// the teaching fields: hint, correct_shape, confirm_token, expected_schema,
// problems and did_you_mean.
func (b *Bridge) Error(tool string, te *toolerr.Error, budget bool) *goja.Object {
	msg := fmt.Sprintf("tools.call(%q) failed: %s: %s", tool, te.Code, te.Message)
	if budget {
		msg = te.Message
	}
	obj, err := b.vm.New(b.errorCtor, b.vm.ToValue(msg))
	if err != nil {
		panic(b.vm.NewGoError(err))
	}
	env, err := b.Parse(te.JSON())
	if err != nil {
		env = goja.Undefined()
	}
	_ = obj.Set("code", string(te.Code))
	_ = obj.Set("tool", tool)
	_ = obj.Set("envelope", env)
	if eo, ok := env.(*goja.Object); ok {
		if inner, ok := eo.Get("error").(*goja.Object); ok {
			for _, k := range []string{"correct_shape", "hint", "confirm_token", "retry", "expected_schema", "problems", "did_you_mean"} {
				if v := inner.Get(k); v != nil && !goja.IsUndefined(v) {
					_ = obj.Set(k, v)
				}
			}
		}
	}
	b.thrown = append(b.thrown, Thrown{Obj: obj, Tool: tool, Err: te, Budget: budget})
	return obj
}

// Find reports whether v is an error this bridge threw.
func (b *Bridge) Find(v goja.Value) (Thrown, bool) {
	o, ok := v.(*goja.Object)
	if !ok {
		return Thrown{}, false
	}
	for _, t := range b.thrown {
		if t.Obj == o {
			return t, true
		}
	}
	return Thrown{}, false
}
