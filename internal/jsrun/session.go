package jsrun

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
)

//go:embed prelude.js
var preludeSrc string

const preludeName = "prelude.js"

var (
	prelude     = goja.MustCompile(preludeName, preludeSrc, true)
	promiseType = reflect.TypeFor[*goja.Promise]()
)

// Interrupt reasons.
var (
	errTimeout = errors.New("timeout")
	errMemory  = errors.New("heap limit")
)

// heapSampleEvery is the heap sampler's period.
const heapSampleEvery = 10 * time.Millisecond

// Session is one fresh sandboxed VM for one Exec. Hosts inject their own
// functions through Runtime before Exec; a Session is not safe for
// concurrent use and cannot be reused.
type Session struct {
	vm    *goja.Runtime
	lim   Limits
	name  string
	shift int // columns added on line 1 by the top-level-await wrapper

	encode, describe, errText goja.Callable
	console                   *sink
	used                      bool
	annotate                  func(*Error) json.RawMessage

	// The event loop for host work (Go, Host.Start): each finished piece
	// queues its settle function for the VM goroutine and signals ready;
	// posting never blocks, so a child's pipe reader hands an answer over
	// and reads on. pending counts what is still out (VM goroutine only);
	// over is set when Exec returns, so late work is dropped; halt is
	// closed when the watchdog interrupts the VM, so a wait on host work
	// ends too.
	qmu     sync.Mutex
	queue   []func() error
	over    bool
	ready   chan struct{} // capacity 1: "the queue has something"
	pending int
	halt    chan struct{}
}

// NewSession builds a VM with the console and the prelude installed. name is
// the script name positions refer to (errors prefer frames in that file).
func NewSession(name string, l Limits) (*Session, error) {
	l = l.withDefaults()
	s := &Session{vm: goja.New(), lim: l, name: name, console: &sink{maxEntries: l.MaxConsole, maxChars: l.MaxOutput},
		ready: make(chan struct{}, 1), halt: make(chan struct{})}
	s.vm.SetMaxCallStackSize(l.MaxCallStack)
	v, err := s.vm.RunProgram(prelude)
	if err != nil {
		return nil, fmt.Errorf("jsrun: prelude: %w", err)
	}
	setup, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("jsrun: prelude is not a function")
	}
	limits := map[string]any{"maxString": MaxStringStep, "maxArray": MaxArrayLength, "maxBytes": MaxBufferBytes, "maxDepth": MaxEncodeDepth}
	h, err := setup(goja.Undefined(), s.vm.ToValue(limits), s.vm.ToValue(CheckSource))
	if err != nil {
		return nil, fmt.Errorf("jsrun: prelude: %w", err)
	}
	ho := h.ToObject(s.vm)
	for name, dst := range map[string]*goja.Callable{"encode": &s.encode, "describe": &s.describe, "errText": &s.errText} {
		if *dst, ok = goja.AssertFunction(ho.Get(name)); !ok {
			return nil, fmt.Errorf("jsrun: prelude lacks %s", name)
		}
	}
	console := s.vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		if err := console.Set(level, s.consoleFunc(level)); err != nil {
			return nil, err
		}
	}
	if err := s.vm.GlobalObject().DefineDataProperty("console", console, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return nil, err
	}
	return s, nil
}

// configure gives a session made ahead of its script (a warm child's) the
// script's name and limits; call it before anything else uses the session.
func (s *Session) configure(name string, l Limits) {
	l = l.withDefaults()
	s.name, s.lim = name, l
	s.vm.SetMaxCallStackSize(l.MaxCallStack)
	s.console.maxEntries, s.console.maxChars = l.MaxConsole, l.MaxOutput
}

// Runtime is the VM, for injecting host functions before Exec. Host
// functions run on the VM goroutine and must honour the context Exec passes
// to the body.
func (s *Session) Runtime() *goja.Runtime { return s.vm }

// Limits are the session's effective limits.
func (s *Session) Limits() Limits { return s.lim }

// Go runs work off the VM goroutine (a host's I/O, such as a tool call a
// script awaits) and then the settle function it returns on the VM goroutine,
// between JavaScript jobs: settle resolves or rejects the Promise the host
// handed the script. Call Go only on the VM goroutine (from a host
// function). A run whose result is a Promise waits for outstanding work to
// settle it; work that finishes after the run ended is dropped.
func (s *Session) Go(work func() (settle func() error)) {
	post := s.later()
	go func() { post(work()) }()
}

// later counts one piece of host work as out (VM goroutine only) and
// returns how its settle function comes back: post may be called once,
// from any goroutine, and never blocks.
func (s *Session) later() (post func(settle func() error)) {
	s.pending++
	return func(settle func() error) {
		s.qmu.Lock()
		if s.over {
			s.qmu.Unlock()
			return
		}
		s.queue = append(s.queue, settle)
		s.qmu.Unlock()
		select {
		case s.ready <- struct{}{}:
		default: // already signalled
		}
	}
}

// next takes the oldest settled piece of work, if any.
func (s *Session) next() (func() error, bool) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if len(s.queue) == 0 {
		return nil, false
	}
	f := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	return f, true
}

// end drops what is queued and whatever host work finishes later.
func (s *Session) end() {
	s.qmu.Lock()
	s.over, s.queue = true, nil
	s.qmu.Unlock()
}

// Annotate sets what a failed run adds to its *Error's Host field: f runs on
// the VM goroutine when the body (or its Promise) failed, so it may read the
// thrown value (e.Thrown()). Call it from the body or before Exec.
func (s *Session) Annotate(f func(e *Error) json.RawMessage) { s.annotate = f }

// Body is the work of one Exec, run on the VM goroutine. It returns the
// value to report; a Promise is awaited (its jobs run when the body returns).
type Body func(ctx context.Context, vm *goja.Runtime) (goja.Value, error)

// Exec runs body under the watchdog and returns the encoded value, or an
// *Error. ctx carries the deadline (Limits.Timeout is applied on top).
func (s *Session) Exec(ctx context.Context, body Body) (*Output, error) {
	if s.used {
		return nil, &Error{Kind: KindInternal, Message: "jsrun: a session runs once"}
	}
	s.used = true
	defer s.end()
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, s.lim.Timeout)
	defer cancel()
	limit := s.lim.Timeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < limit {
		limit = max(0, time.Until(d))
	}

	type outcome struct {
		result string // JSON, "" for undefined
		err    *Error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o = outcome{err: &Error{Kind: KindInternal, Message: fmt.Sprintf("jsrun: interpreter panic: %v", r)}}
			}
			done <- o
		}()
		o.result, o.err = s.run(runCtx, body)
		if o.err != nil && s.annotate != nil {
			func() {
				defer func() { _ = recover() }() // a hostile getter: no annotation
				o.err.Host = s.annotate(o.err)
			}()
		}
	}()

	var (
		reason  error // why the VM was interrupted
		expired = runCtx.Done()
		grace   <-chan time.Time
		heap    <-chan time.Time
		base    uint64
		samples []metrics.Sample
	)
	if s.lim.MaxHeapGrowth > 0 {
		samples = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		base = heapBytes(samples)
		t := time.NewTicker(heapSampleEvery)
		defer t.Stop()
		heap = t.C
	}
	interrupt := func(why error) {
		if reason == nil {
			reason = why
			s.vm.Interrupt(why)
			close(s.halt)
			grace = time.After(Grace)
		}
	}
	var o outcome
wait:
	for {
		select {
		case o = <-done:
			break wait
		case <-expired:
			expired = nil
			select {
			case o = <-done: // finished just in time
				break wait
			default:
			}
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				interrupt(ctx.Err())
			} else {
				interrupt(errTimeout)
			}
		case <-heap:
			if n := heapBytes(samples); n > base && int64(n-base) > s.lim.MaxHeapGrowth {
				interrupt(errMemory)
			}
		case <-grace:
			// The VM is inside a native call that does not check interrupts:
			// give up on it. It stops at its next instruction.
			o = outcome{err: &Error{Kind: KindInternal}}
			break wait
		}
	}
	entries, truncated := s.console.close()
	if reason != nil {
		// Whatever the body returned, the run was cut short.
		return nil, s.interrupted(reason, limit, entries, truncated)
	}
	if o.err != nil {
		o.err.Console, o.err.Truncated = entries, truncated
		return nil, o.err
	}
	out := &Output{Console: entries, Truncated: truncated, Duration: time.Since(start)}
	s.cap(out, o.result)
	return out, nil
}

func (s *Session) interrupted(reason error, limit time.Duration, entries []Entry, truncated bool) *Error {
	e := &Error{Console: entries, Truncated: truncated}
	switch {
	case errors.Is(reason, errTimeout):
		e.Kind, e.Message = KindTimeout, fmt.Sprintf("the code did not finish within %s", limit.Round(10*time.Millisecond))
		e.Cause = context.DeadlineExceeded
	case errors.Is(reason, errMemory):
		e.Kind, e.Message = KindMemory, fmt.Sprintf("the code grew the heap by more than %d MiB", s.lim.MaxHeapGrowth>>20)
	default:
		e.Kind, e.Message, e.Cause = KindCancelled, "the run was cancelled", reason
	}
	return e
}

// run is the VM goroutine's work: the body, Promise settlement, encoding.
func (s *Session) run(ctx context.Context, body Body) (string, *Error) {
	v, err := body(ctx, s.vm)
	if err != nil {
		return "", s.convert(err)
	}
	if v == nil {
		return "", nil
	}
	if e := s.await(v); e != nil {
		return "", e
	}
	if o, ok := v.(*goja.Object); ok && o.ExportType() == promiseType {
		if p, ok := o.Export().(*goja.Promise); ok {
			switch p.State() {
			case goja.PromiseStateFulfilled:
				v = p.Result()
			case goja.PromiseStateRejected:
				return "", s.exception(p.Result(), nil)
			default:
				return "", &Error{Kind: KindException, Message: "Error: the returned Promise never settled (this sandbox has no timers or I/O to wait for)"}
			}
		}
	}
	if goja.IsUndefined(v) {
		return "", nil
	}
	r, err := s.encode(goja.Undefined(), v, s.vm.ToValue(s.lim.MaxOutput))
	if err != nil {
		return "", s.convert(err)
	}
	if goja.IsUndefined(r) {
		return "", nil
	}
	return r.String(), nil
}

// cap fits the result and the console into MaxOutput characters, the result first.
func (s *Session) cap(out *Output, result string) {
	max := s.lim.MaxOutput
	switch {
	case result == "":
		out.Result = json.RawMessage("null")
	case utf8.RuneCountInString(result) > max || !json.Valid([]byte(result)):
		cut := cutRunes(result, max)
		b, _ := jsonscan.Marshal(cut)
		out.Result, out.Truncated = b, true
		result = cut
	default:
		out.Result = json.RawMessage(result)
	}
	room := max - utf8.RuneCountInString(result)
	for i, e := range out.Console {
		n := utf8.RuneCountInString(e.Text)
		if n <= room {
			room -= n
			continue
		}
		out.Truncated = true
		if room > 0 {
			out.Console[i].Text = cutRunes(e.Text, room)
			i++
		}
		out.Console = out.Console[:i]
		break
	}
	if out.Console == nil {
		out.Console = []Entry{}
	}
}

// await runs the event loop while v is a pending Promise and host work
// started with Go is still out.
func (s *Session) await(v goja.Value) *Error {
	o, ok := v.(*goja.Object)
	if !ok || o.ExportType() != promiseType {
		return nil
	}
	p, ok := o.Export().(*goja.Promise)
	if !ok {
		return nil
	}
	halted := &Error{Kind: KindCancelled, Message: "interrupted"} // the watchdog fired (deadline, cancellation, heap): Exec reports why
	for p.State() == goja.PromiseStatePending && s.pending > 0 {
		settle, ok := s.next()
		if !ok {
			select {
			case <-s.ready:
				continue
			case <-s.halt:
				return halted
			}
		}
		select {
		case <-s.halt:
			return halted
		default:
		}
		s.pending--
		if err := settle(); err != nil {
			return s.convert(err)
		}
	}
	return nil
}

// convert turns an error from goja or a body into an *Error.
func (s *Session) convert(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		// Exec reports the reason; this is only seen if the body swallowed it.
		return &Error{Kind: KindCancelled, Message: "interrupted"}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		e := &Error{Kind: KindException, Message: "RangeError: Maximum call stack size exceeded"}
		s.locate(e, so.Stack())
		return e
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return s.exception(ex.Value(), ex.Stack())
	}
	var ce *goja.CompilerSyntaxError
	if errors.As(err, &ce) {
		return syntaxError(err)
	}
	return &Error{Kind: KindException, Message: err.Error()}
}

// exception describes a thrown (or rejected) value.
func (s *Session) exception(v goja.Value, stack []goja.StackFrame) *Error {
	e := &Error{Kind: KindException, thrown: v}
	e.Message = s.text(s.errText, v, "Error")
	if o, ok := v.(*goja.Object); !ok || !isErrorObject(s.vm, o) {
		e.Message = "Uncaught " + s.text(s.describe, v, "exception")
	}
	if stack != nil {
		s.locate(e, stack)
	} else if o, ok := v.(*goja.Object); ok {
		// A rejected Promise carries no Go stack: read the error's own.
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			s.locateText(e, st.String())
		}
	}
	return e
}

// text calls a prelude helper, falling back when it fails.
func (s *Session) text(fn goja.Callable, v goja.Value, fallback string) (out string) {
	defer func() {
		if recover() != nil {
			out = fallback
		}
	}()
	r, err := fn(goja.Undefined(), v, s.vm.ToValue(2000))
	if err != nil || r == nil {
		return fallback
	}
	return cutRunes(r.String(), 2000)
}

func isErrorObject(vm *goja.Runtime, o *goja.Object) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	ctor, isObj := vm.Get("Error").(*goja.Object)
	return isObj && o.ClassName() == "Error" || isObj && vm.InstanceOf(o, ctor)
}

// locate sets the position and stack text from goja frames, preferring the
// first frame in the user's script.
func (s *Session) locate(e *Error, frames []goja.StackFrame) {
	var b strings.Builder
	shown := 0
	for i, f := range frames {
		if f.SrcName() == preludeName {
			continue
		}
		if shown == 10 {
			fmt.Fprintf(&b, "... %d more frames\n", len(frames)-i)
			break
		}
		shown++
		p := f.Position()
		fn := f.FuncName()
		if fn == "" {
			fn = "<anonymous>"
		}
		if p.Line > 0 {
			col := p.Column
			if p.Line == 1 && f.SrcName() == s.name {
				col = max(1, col-s.shift)
			}
			fmt.Fprintf(&b, "at %s (%s:%d:%d)\n", fn, f.SrcName(), p.Line, col)
			if e.Line == 0 && f.SrcName() == s.name {
				e.Line, e.Column = p.Line, col
			}
		} else {
			fmt.Fprintf(&b, "at %s (native)\n", fn)
		}
	}
	e.Stack = strings.TrimSuffix(b.String(), "\n")
}

// frameText matches a line of goja's stack property:
// "at fn (file:line:col(pc))", "at file:line:col(pc)" or "at fn (native)".
var frameText = regexp.MustCompile(`^at (?:(.*?) \()?([^()]*?):(\d+):(\d+)(?:\(\d+\))?\)?$`)

// locateText reads the frames of an error's stack property (a rejected
// Promise has no Go-side stack).
func (s *Session) locateText(e *Error, stack string) {
	var lines []string
	for _, ln := range strings.Split(stack, "\n") {
		ln = strings.TrimSpace(ln)
		m := frameText.FindStringSubmatch(ln)
		if m == nil || m[2] == preludeName {
			continue
		}
		line, _ := strconv.Atoi(m[3])
		col, _ := strconv.Atoi(m[4])
		if line == 1 && m[2] == s.name {
			col = max(1, col-s.shift)
		}
		fn := m[1]
		if fn == "" {
			fn = "<anonymous>"
		}
		lines = append(lines, fmt.Sprintf("at %s (%s:%d:%d)", fn, m[2], line, col))
		if e.Line == 0 && m[2] == s.name {
			e.Line, e.Column = line, col
		}
		if len(lines) == 10 {
			break
		}
	}
	e.Stack = strings.Join(lines, "\n")
}

func (s *Session) consoleFunc(level string) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		room := s.console.room()
		if room <= 0 {
			s.console.drop()
			return goja.Undefined()
		}
		var b strings.Builder
		for i, a := range c.Arguments {
			if i > 0 {
				b.WriteByte(' ')
			}
			if goja.IsString(a) {
				b.WriteString(a.String())
			} else {
				b.WriteString(s.text(s.describe, a, "[unprintable]"))
			}
			if b.Len() > room*utf8.UTFMax {
				break
			}
		}
		s.console.add(level, b.String())
		return goja.Undefined()
	}
}

// sink collects console entries; it is shared between the VM goroutine and
// Exec, which closes it when the run ends (an abandoned VM writes nothing more).
type sink struct {
	mu         sync.Mutex
	entries    []Entry
	chars      int
	maxEntries int
	maxChars   int
	truncated  bool
	closed     bool
}

// room is how many more characters fit (0 when no entry fits).
func (k *sink) room() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed || len(k.entries) >= k.maxEntries {
		return 0
	}
	return k.maxChars - k.chars
}

func (k *sink) drop() {
	k.mu.Lock()
	k.truncated = true
	k.mu.Unlock()
}

func (k *sink) add(level, text string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	if len(k.entries) >= k.maxEntries || k.chars >= k.maxChars {
		k.truncated = true
		return
	}
	n := utf8.RuneCountInString(text)
	if room := k.maxChars - k.chars; n > room {
		text, n, k.truncated = cutRunes(text, room), room, true
	}
	k.entries = append(k.entries, Entry{Level: level, Text: text})
	k.chars += n
}

func (k *sink) close() ([]Entry, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	return k.entries, k.truncated
}

func heapBytes(s []metrics.Sample) uint64 {
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// cutRunes keeps the first n runes of s.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
