// Package jsrun is the JavaScript sandbox shared by the execute_javascript
// built-in and by skills (docs/providers/builtins.md). It runs ECMAScript on
// goja, a pure-Go interpreter, in a fresh VM per run.
//
// Where it runs: the server's scripts go through [Isolated], which runs each
// in its own child process (this binary started with [ChildArg]; isolate.go,
// child.go) from a small pool of warm children, each used for one script
// and discarded. The child holds only the interpreter, under the operating
// system's limits (Limits.Memory and Limits.CPU, no environment, no
// descriptors but its pipes), and the parent kills it at the deadline; the
// host's functions ([Installer], registered by kind) reach the server only
// through [Host] calls over the pipe (wire.go), which the parent answers
// with the run's [HostFunc]. A child's death is its script's error in words
// (KindMemory, KindCPU, KindTimeout). [InProcess] runs the same [Script] in
// this process: the fallback where a child cannot be limited (see
// [Isolation]), and the benchmark's baseline.
//
// What the code can reach: the ECMAScript built-ins, a captured console
// (log/info/warn/error/debug), and whatever the host injects through
// [Session.Runtime] (skills and execute_javascript inject `tools`; a host
// function that does I/O hands the script a Promise and settles it from
// [Session.Go] between jobs). There is no require, import,
// fetch, process, timer, file system, network or Go object: goja has none of
// them unless the host adds them, and this package adds none. eval and the
// Function constructors exist but go through the same source checks as the
// program, and eval is always indirect (global scope).
//
// Bounds:
//   - Time: a watchdog interrupts the VM at the deadline (Limits.Timeout) or when
//     the context ends; goja checks the interrupt between instructions, so it
//     stops infinite loops and deep recursion. A single native built-in call is
//     not interruptible: in process the run then returns at the deadline plus
//     a short grace and the VM goroutine is abandoned; isolated, the parent
//     kills the child shortly after the deadline. Isolated, Limits.CPU bounds
//     the processor time too (RLIMIT_CPU).
//   - Output: at most MaxOutput characters (result and console together, the
//     result first) and MaxConsole console entries; the rest is dropped and
//     Truncated is set. Results are encoded by a budgeted encoder that stops
//     after the cap, so a huge value costs only what is shown.
//   - Stack: MaxCallStack JavaScript frames (RangeError past it).
//   - Source: programs, eval and new Function sources are refused past
//     MaxSourceLen bytes, bracket nesting past 1000, or 5000 arrows: goja's
//     parser recurses (a deep enough nesting overflows the Go stack and kills
//     the process) and is quadratic in scope nesting.
//   - Memory: goja has no heap limit. The prelude refuses the one-step
//     allocations that would otherwise be unbounded (String repeat/padStart/
//     padEnd past 16 Mi characters; arrays past 8 Mi elements through the
//     constructor, species creation, Array.from, fill, join; typed arrays and
//     buffers past 128 MiB). Isolated, the child's memory watcher and its
//     address-space limit end the process past Limits.Memory, whatever
//     native call is running. In process only, a sampler interrupts the run
//     when the process's heap grows more than MaxHeapGrowth (default 512
//     MiB): it is process-wide (concurrent runs count) and cannot stop a
//     native call in progress, which is why the server isolates.
//   - Regular expressions: patterns goja cannot give to Go's linear-time
//     engine (backreferences, lookaround) run on a backtracking engine; each
//     match is bounded by RegexpMatchTimeout, after which it silently fails
//     to match (a process-wide setting of that engine).
package jsrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// Defaults and fixed caps.
const (
	DefaultTimeout       = 2500 * time.Millisecond
	DefaultMaxOutput     = 30000
	DefaultMaxConsole    = 200
	DefaultMaxCallStack  = 10000
	DefaultMaxHeapGrowth = 512 << 20
	// DefaultMemory and DefaultCPU bound an isolated run (code.memory,
	// code.cpu).
	DefaultMemory = 256 << 20
	DefaultCPU    = 10 * time.Second
	// MaxSourceLen bounds a program, an eval or a new Function source (bytes).
	MaxSourceLen = 512 << 10
	// MaxNesting bounds bracket nesting in a source.
	MaxNesting = 1000
	// MaxArrows bounds the arrow functions in a source (each may nest a scope
	// without brackets).
	MaxArrows = 5000
	// MaxStringStep is the longest string repeat/padStart/padEnd may build.
	MaxStringStep = 1 << 24
	// MaxArrayLength is the longest array the guarded built-ins may create.
	MaxArrayLength = 1 << 23
	// MaxBufferBytes is the largest ArrayBuffer or typed array.
	MaxBufferBytes = 1 << 27
	// MaxEncodeDepth is how deep the result encoder descends.
	MaxEncodeDepth = 64
	// RegexpMatchTimeout bounds one backtracking regular-expression match.
	RegexpMatchTimeout = 1 * time.Second
	// Grace is how long a run waits after interrupting the VM before it gives
	// up on the VM goroutine.
	Grace = 500 * time.Millisecond
	// ScriptName is the file name errors report for Run's code.
	ScriptName = "code.js"
)

func init() {
	// Only goja uses this module (v2) in the binary; see the package doc.
	regexp2.DefaultMatchTimeout = RegexpMatchTimeout
}

// Limits bound one run. Zero fields take the defaults.
type Limits struct {
	Timeout      time.Duration
	MaxOutput    int // characters of result plus console text
	MaxConsole   int // console entries
	MaxCallStack int // JavaScript frames
	// MaxHeapGrowth interrupts the run when the process heap grows this many
	// bytes over its size at the start; negative disables the sampler. Only
	// the in-process runner uses it: an isolated run has Memory instead.
	MaxHeapGrowth int64 `json:"-"`
	// Memory bounds an isolated run's process (address space, or the
	// cgroup's memory.max where delegated); 0: DefaultMemory.
	Memory int64
	// CPU bounds an isolated run's processor time; 0: DefaultCPU.
	CPU time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	if l.MaxConsole <= 0 {
		l.MaxConsole = DefaultMaxConsole
	}
	if l.MaxCallStack <= 0 {
		l.MaxCallStack = DefaultMaxCallStack
	}
	if l.MaxHeapGrowth == 0 {
		l.MaxHeapGrowth = DefaultMaxHeapGrowth
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.CPU <= 0 {
		l.CPU = DefaultCPU
	}
	return l
}

// Entry is one console call.
type Entry struct {
	Level string `json:"level"` // log, info, warn, error, debug
	Text  string `json:"text"`
}

// Output is a finished run.
type Output struct {
	// Result is the JSON of the completion value (of its resolution when it
	// is a Promise); JSON null for undefined. When the JSON was cut at the
	// output cap, Result is a JSON string holding the cut text.
	Result json.RawMessage `json:"result"`
	// Console holds the captured console entries, oldest first.
	Console []Entry `json:"console"`
	// Truncated is set when output or console entries were dropped.
	Truncated bool `json:"truncated"`
	// Duration is the wall time of the run.
	Duration time.Duration `json:"-"`
}

// Kind classifies a failed run.
type Kind string

const (
	KindSyntax    Kind = "syntax"    // the code does not parse
	KindLimit     Kind = "limit"     // the code is too large or too nested to parse safely
	KindException Kind = "exception" // an uncaught exception or a rejected Promise
	KindTimeout   Kind = "timeout"   // the watchdog fired
	KindMemory    Kind = "memory"    // the script's process reached its memory limit (in process: the heap sampler fired)
	KindCPU       Kind = "cpu"       // the script's process used its processor time
	KindCancelled Kind = "cancelled" // the caller's context ended
	KindInternal  Kind = "internal"  // a bug: a panic in the interpreter or the host
)

// Error is a failed run. Console and Truncated hold what the code logged
// before it failed.
type Error struct {
	Kind    Kind
	Message string // "ReferenceError: x is not defined"
	// Line and Column locate the failure in the user's source (1-based; 0 when unknown).
	Line, Column int
	// Stack lists the JavaScript frames, innermost first, one per line.
	Stack     string
	Console   []Entry
	Truncated bool
	// Cause is the context error for KindCancelled and KindTimeout caused by the context.
	Cause error
	// Host is what the script's installer added about the failure (such as
	// the envelope of a tool call the script did not catch); see
	// [Session.Annotate].
	Host json.RawMessage

	thrown goja.Value // for hosts that recognise their own errors
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d, column %d)", e.Line, e.Column)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Cause }

// Thrown is the goja.Value the code threw (nil when the failure was not a
// throw). Hosts compare it with objects they created to recognise their own
// errors.
func (e *Error) Thrown() goja.Value { return e.thrown }

// Setup installs a host's globals (such as `tools`) on the VM goroutine
// before the code runs; ctx is the run's context.
type Setup func(ctx context.Context, s *Session, vm *goja.Runtime) error

// RunWith is Run with the host's globals installed by setup first.
func RunWith(ctx context.Context, code string, l Limits, setup Setup) (*Output, error) {
	s, err := NewSession(ScriptName, l)
	if err != nil {
		return nil, &Error{Kind: KindInternal, Message: err.Error()}
	}
	return s.Exec(ctx, func(ctx context.Context, vm *goja.Runtime) (goja.Value, error) {
		if setup != nil {
			if err := setup(ctx, s, vm); err != nil {
				return nil, err
			}
		}
		prg, shift, err := compileMain(ScriptName, code)
		if err != nil {
			return nil, err
		}
		s.shift = shift
		return vm.RunProgram(prg)
	})
}

// Run runs code as a script in a fresh session and reports its completion
// value. Code that uses top-level await or return runs as the body of an
// async function whose last expression statement is returned.
func Run(ctx context.Context, code string, l Limits) (*Output, error) {
	return RunWith(ctx, code, l, nil)
}
