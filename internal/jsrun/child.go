package jsrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// ChildArg is the hidden command line argument that makes this binary a
// script's child process: `agent-tools __jsrun` (internal/cli) or a test
// binary whose TestMain calls [MaybeChild].
const ChildArg = "__jsrun"

// Exit statuses of a child that ended itself (the runtime's own fatal
// errors exit 2).
const (
	exitOK       = 0
	exitCPU      = 3 // SIGXCPU: the soft CPU limit passed
	exitMemory   = 4 // the memory watcher saw the limit pass
	exitProtocol = 5 // the parent sent something unreadable, or left
)

// childCapable is set when this binary can serve as a script's child: its
// entry point routes ChildArg to ChildMain.
var childCapable atomic.Bool

// EnableChild declares that running this executable with ChildArg as its
// first argument reaches [ChildMain] (internal/cli does so for the real
// binary). Without it, [Isolated] runs scripts in process.
func EnableChild() { childCapable.Store(true) }

// MaybeChild is for a test binary's TestMain, first thing: when the binary
// was started as a script's child it serves the script and exits; otherwise
// it enables isolation (the pool re-executes the test binary) and returns.
//
//	func TestMain(m *testing.M) { jsrun.MaybeChild(); os.Exit(m.Run()) }
func MaybeChild() {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		os.Exit(ChildMain(os.Stdin, os.Stdout))
	}
	EnableChild()
}

// ChildMain is a script's child process: it reads one script from in, runs
// it under the limits it carries (applied to this process before the first
// instruction), answers on out and returns the exit status. Host calls go
// to the parent as requests on out; their answers come on in.
func ChildMain(in io.Reader, out io.Writer) int {
	closeInherited()
	if f, ok := in.(*os.File); ok {
		in = pollable(f)
	}
	if f, ok := out.(*os.File); ok {
		out = pollable(f)
	}
	// The interpreter is made while the child waits for its script, after
	// throwaway runs that take the first-use costs of a new process (code
	// pages, lazily built tables, the JSON codecs of the host calls): a
	// warm child's script starts at once. Its pipes go to the runtime's
	// poller (pollable).
	debug.SetGCPercent(400) // a script's process is short-lived; the memory watcher bounds it
	warmUp()
	warm, err := NewSession(ScriptName, Limits{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsrun child:", err)
		return exitProtocol
	}
	startProfile, stopProfile := childProfile()
	if err := prepareLimits(); err != nil {
		fmt.Fprintln(os.Stderr, "jsrun child: cannot set limits:", err)
		return exitProtocol
	}
	c := &childConn{w: out, waiting: map[uint64]func(*message){}}
	if err := c.send(&message{T: msgReady}); err != nil {
		return exitProtocol
	}
	r := bufio.NewReaderSize(in, 64<<10)
	b, err := readFrame(r, MaxFrame)
	if err != nil {
		return exitProtocol
	}
	m, err := decodeMessage(b)
	if err != nil || m.T != msgRun {
		return exitProtocol
	}
	startProfile()
	sc := m.Run
	sc.Limits = sc.Limits.withDefaults()
	sc.Limits.MaxHeapGrowth = -1 // the process limit replaces the sampler
	if err := limitSelf(sc.Limits); err != nil {
		// An unlimited child must not run hostile code.
		fmt.Fprintln(os.Stderr, "jsrun child: cannot set limits:", err)
		return exitProtocol
	}
	watchMemory(sc.Limits.Memory)

	go c.readLoop(r)
	host := &Host{call: c.call, start: c.start}
	o, err := execScript(context.Background(), sc, host, warm)
	done := &message{T: msgDone, Out: o}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Kind: KindInternal, Message: err.Error()}
		}
		done = &message{T: msgDone, Fail: toWire(e)}
	}
	stopProfile()
	if err := c.send(done); err != nil {
		small := &message{T: msgDone, Fail: &wireError{Kind: KindInternal, Message: "jsrun: the script's answer did not fit the pipe: " + err.Error()}}
		if c.send(small) != nil {
			return exitProtocol
		}
	}
	return exitOK
}

// warmUpCode exercises what most scripts use: compiling a wrapped program,
// closures, JSON, a Promise, the console and the result encoder.
const warmUpCode = `const xs = JSON.parse('[{"a":1,"b":"x"},{"a":2,"b":"y"}]'); ` +
	`console.log("w", xs.length); const r = await Promise.all(xs.map(async x => ({...x, c: String(x.a).padStart(3, "0")}))); ` +
	`return r.filter(x => x.a > 0).map(x => [x.b, x.c].join(":"))`

// warmUp runs warmUpCode, then each registered kind's warm-up
// (RegisterWarmUp) with its in-process host.
func warmUp() {
	_, _ = execScript(context.Background(), &Script{Code: warmUpCode, Limits: Limits{Timeout: 2 * time.Second}}, nil, nil)
	installersMu.RLock()
	runs := append([]Script(nil), warmUps...)
	hosts := make([]*Host, len(runs))
	for i, sc := range runs {
		hosts[i] = &Host{call: warmHosts[sc.Kind]}
	}
	installersMu.RUnlock()
	for i, sc := range runs {
		sc.Limits = Limits{Timeout: 2 * time.Second}
		_, _ = execScript(context.Background(), &sc, hosts[i], nil)
	}
}

// childConn is the child's end of the wire.
type childConn struct {
	wmu sync.Mutex
	w   io.Writer
	buf []byte // the last frame's buffer, reused (under wmu)

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]func(*message) // by request id: who takes the answer
}

func (c *childConn) send(m *message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var err error
	c.buf, err = writeMessage(c.w, c.buf, m)
	return err
}

// start sends a request and returns; readLoop hands its answer to done.
func (c *childConn) start(method string, params json.RawMessage, done func(json.RawMessage, error)) {
	c.mu.Lock()
	c.next++
	id := c.next
	c.waiting[id] = func(m *message) {
		if m.E != "" {
			done(nil, errors.New(m.E))
			return
		}
		done(m.D, nil)
	}
	c.mu.Unlock()
	if err := c.send(&message{T: msgReq, ID: id, M: method, D: params}); err != nil {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
		done(nil, fmt.Errorf("%s: %w", method, err))
	}
}

// call is one host call: a request, then the answer with its id.
func (c *childConn) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	type answer struct {
		d   json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	c.start(method, params, func(d json.RawMessage, err error) { ch <- answer{d, err} })
	select {
	case a := <-ch:
		return a.d, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readLoop hands each answer to its caller, which must not block. The
// parent closing the pipe (it went away, or gave up on this script) ends
// the process.
func (c *childConn) readLoop(r io.Reader) {
	for {
		b, err := readFrame(r, MaxFrame)
		if err != nil {
			os.Exit(exitProtocol)
		}
		m, err := decodeMessage(b)
		if err != nil || m.T != msgRes {
			os.Exit(exitProtocol)
		}
		c.mu.Lock()
		done := c.waiting[m.ID]
		delete(c.waiting, m.ID)
		c.mu.Unlock()
		if done != nil {
			done(m)
		}
	}
}
