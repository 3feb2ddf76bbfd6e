package jsrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dop251/goja"
)

// Script is one run as a [Runner] takes it: everything the interpreter
// needs, in a form that crosses a process boundary.
type Script struct {
	// Kind names the registered [Installer] that sets up the VM and runs
	// the code ("" runs Code as a plain program, as [Run] does).
	Kind string `json:"kind,omitempty"`
	// Name is the file name positions refer to (ScriptName when empty).
	Name string `json:"name,omitempty"`
	Code string `json:"code"`
	// Config is the installer's own settings (JSON).
	Config json.RawMessage `json:"config,omitempty"`
	Limits Limits          `json:"limits"`
}

// HostFunc serves a script's host calls on the server's side: method and
// params are the installer's own (JSON both ways). A host reports its own
// failures inside the result; an error is a broken call (the script sees a
// generic failure).
type HostFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// Host is the interpreter's side of the HostFunc: in a child process each
// call is a request to the server over the pipe; in process it calls the
// HostFunc directly. Call is safe for concurrent use (from [Session.Go]
// work as well as the VM goroutine).
type Host struct {
	call func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// start, when set (a child's pipe), sends a request at once and hands
	// its answer to done from the pipe's reader; done must not block.
	start func(method string, params json.RawMessage, done func(json.RawMessage, error))
}

// Call sends params (marshalled to JSON) and decodes the answer into out
// (when out is not nil).
func (h *Host) Call(ctx context.Context, method string, params, out any) error {
	if h == nil || h.call == nil {
		return errors.New("jsrun: this script has no host")
	}
	b, err := json.Marshal(params)
	if err != nil {
		return err
	}
	res, err := h.call(ctx, method, b)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res, out)
}

// Start is an asynchronous host call made on the VM goroutine (from a
// host function): params (marshalled to JSON) leave at once, and then runs
// with the answer on the VM goroutine between JavaScript jobs, as a
// [Session.Go] settle function does (a run that ended first drops it). In a
// child process the request is written before Start returns and the pipe's
// reader queues the answer for the VM: no goroutine waits in between, and
// requests go on the wire in the order the script made them.
func (h *Host) Start(ctx context.Context, s *Session, method string, params any, then func(res json.RawMessage, err error) error) {
	b, err := json.Marshal(params)
	switch {
	case h == nil || h.call == nil:
		err = errors.New("jsrun: this script has no host")
	case err != nil:
	case h.start != nil:
		post := s.later()
		h.start(method, b, func(res json.RawMessage, err error) {
			post(func() error { return then(res, err) })
		})
		return
	default:
		s.Go(func() func() error {
			res, err := h.call(ctx, method, b)
			return func() error { return then(res, err) }
		})
		return
	}
	s.Go(func() func() error { return func() error { return then(nil, err) } })
}

// Installer sets up the VM for one kind of script (the `tools` object of
// execute_javascript, a skill's run function) and runs sc.Code: it is a
// [Body] with the script and its host. It runs wherever the interpreter
// runs, so it may only reach the server through host.
type Installer func(ctx context.Context, s *Session, vm *goja.Runtime, sc *Script, host *Host) (goja.Value, error)

var (
	installersMu sync.RWMutex
	installers   = map[string]Installer{}
)

// Register makes an installer available under kind; packages call it from
// init, so that the child process (the same binary) has it too.
func Register(kind string, in Installer) {
	installersMu.Lock()
	defer installersMu.Unlock()
	if _, dup := installers[kind]; dup || kind == "" {
		panic("jsrun: installer registered twice or without a kind: " + kind)
	}
	installers[kind] = in
}

// warmUps are the registered warm-up runs (RegisterWarmUp), by kind.
var warmUps []Script

// warmHosts answer the warm-up runs' host calls, by kind.
var warmHosts = map[string]HostFunc{}

// RegisterWarmUp gives a child process a throwaway run of a registered
// kind to make while it waits for its script: code with config, its host
// calls answered in the child by host (no server involved). A fresh
// process pays for every first use (code pages, the JSON codecs of the
// host calls' types, the installer's own tables); after the warm-up the
// script does not.
func RegisterWarmUp(kind, code string, config json.RawMessage, host HostFunc) {
	installersMu.Lock()
	defer installersMu.Unlock()
	if _, ok := installers[kind]; !ok || warmHosts[kind] != nil || host == nil {
		panic("jsrun: a warm-up for an unknown kind, twice, or without a host: " + kind)
	}
	warmUps = append(warmUps, Script{Kind: kind, Code: code, Config: config})
	warmHosts[kind] = host
}

func installer(kind string) (Installer, bool) {
	installersMu.RLock()
	defer installersMu.RUnlock()
	in, ok := installers[kind]
	return in, ok
}

// RunMain compiles code as a main program (top-level await and return
// allowed) and runs it; installers call it after installing their globals.
func RunMain(s *Session, vm *goja.Runtime, code string) (goja.Value, error) {
	prg, shift, err := compileMain(s.name, code)
	if err != nil {
		return nil, err
	}
	s.shift = shift
	return vm.RunProgram(prg)
}

// Runner runs scripts: [InProcess] in this process, [Isolated] each in a
// child process with the operating system's limits.
type Runner interface {
	Run(ctx context.Context, sc Script, host HostFunc) (*Output, error)
}

// InProcess runs scripts inside this process (the fallback where a child
// process cannot be limited, and the benchmark's baseline). The heap
// sampler (Limits.MaxHeapGrowth) is its only memory bound.
var InProcess Runner = inProcess{}

type inProcess struct{}

func (inProcess) Run(ctx context.Context, sc Script, host HostFunc) (*Output, error) {
	h := &Host{call: host}
	if host == nil {
		h = nil
	}
	return execScript(ctx, &sc, h, nil)
}

// execScript runs sc in a fresh session of this process: warm, when not
// nil, is one made ahead of time and not used yet.
func execScript(ctx context.Context, sc *Script, host *Host, warm *Session) (*Output, error) {
	name := sc.Name
	if name == "" {
		name = ScriptName
	}
	var in Installer
	if sc.Kind != "" {
		var ok bool
		if in, ok = installer(sc.Kind); !ok {
			return nil, &Error{Kind: KindInternal, Message: fmt.Sprintf("jsrun: no installer for %q in this binary", sc.Kind)}
		}
	}
	s := warm
	if s != nil {
		s.configure(name, sc.Limits)
	} else {
		var err error
		if s, err = NewSession(name, sc.Limits); err != nil {
			return nil, &Error{Kind: KindInternal, Message: err.Error()}
		}
	}
	return s.Exec(ctx, func(ctx context.Context, vm *goja.Runtime) (goja.Value, error) {
		if in == nil {
			return RunMain(s, vm, sc.Code)
		}
		return in(ctx, s, vm, sc, host)
	})
}
