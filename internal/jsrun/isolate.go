package jsrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// DefaultPoolSize is how many warm children wait for a script.
const DefaultPoolSize = 2

// killSlack is how long past a script's deadline the server waits for the
// child's own watchdog (which reports the console) before killing it.
const killSlack = 250 * time.Millisecond

// maxPending bounds a script's host calls in flight on the server.
const maxPending = 64

// Isolated is the runner of the server: each script in its own child
// process with the operating system's limits, from a small pool of warm
// children (each used for one script, then discarded). Where a child cannot
// be limited (see [Isolation]) it is [InProcess].
func Isolated() Runner {
	if ok, _ := Isolation(); ok {
		return defaultPool()
	}
	return InProcess
}

// Isolation reports whether scripts run in limited child processes here,
// and how (or why not), for doctor.
func Isolation() (bool, string) {
	ok, how := isolation()
	if !ok {
		return false, how
	}
	if !childCapable.Load() {
		return false, "scripts run inside the server: this program cannot start itself as a script's process"
	}
	return true, how
}

var defaultPool = sync.OnceValue(func() *Pool { return NewPool(DefaultPoolSize) })

// Shutdown ends the warm children of the server's pool (a running script's
// child ends with its run).
func Shutdown() {
	if ok, _ := Isolation(); ok {
		defaultPool().Close()
	}
}

// Pool runs scripts in child processes of this executable, keeping up to
// size started and waiting. Children start lazily, after the first Run;
// the pool refills after each run.
type Pool struct {
	size int

	mu       sync.Mutex
	idle     []*child
	starting int
	closed   bool
	changed  chan struct{} // closed (and replaced) when a child joins idle
}

// NewPool makes a pool of size warm children (at least 0).
func NewPool(size int) *Pool { return &Pool{size: max(0, size), changed: make(chan struct{})} }

// Warm starts the pool's children and waits until they are all ready (or
// ctx ends).
func (p *Pool) Warm(ctx context.Context) error {
	p.refill()
	for {
		p.mu.Lock()
		full, changed := len(p.idle) >= p.size || p.closed, p.changed
		p.mu.Unlock()
		if full {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Warm starts the server's pool and waits until its children are ready
// (a no-op where scripts run in process).
func Warm(ctx context.Context) error {
	if ok, _ := Isolation(); !ok {
		return nil
	}
	return defaultPool().Warm(ctx)
}

// Close kills the waiting children; later runs start their own.
func (p *Pool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.kill()
	}
}

func (p *Pool) get() (*child, error) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if c.alive() {
			return c, nil
		}
		c.kill()
	}
	return startChild()
}

func (p *Pool) refill() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	need := p.size - len(p.idle) - p.starting
	p.starting += max(0, need)
	p.mu.Unlock()
	for range need {
		go func() {
			c, err := startChild()
			p.mu.Lock()
			p.starting--
			if err == nil && !p.closed {
				p.idle = append(p.idle, c)
				c = nil
				close(p.changed)
				p.changed = make(chan struct{})
			}
			p.mu.Unlock()
			if c != nil {
				c.kill()
			}
		}()
	}
}

// child is one started child process waiting for its script.
type child struct {
	cmd    *exec.Cmd
	in     *os.File      // the child's stdin, our end
	out    *bufio.Reader // the child's stdout, our end
	outF   *os.File
	stderr *tail
	job    childJob      // its job object where the server sets its limits (Windows)
	exited chan struct{} // closed once Wait returned
	state  *os.ProcessState
	wmu    sync.Mutex
	wbuf   []byte // the last frame's buffer, reused (under wmu)
}

func startChild() (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &child{in: inW, outF: outR, out: bufio.NewReaderSize(outR, 64<<10), stderr: &tail{max: 4 << 10}, exited: make(chan struct{})}
	cmd := exec.Command(exe, ChildArg)
	// The name this process was started by: a binary that dispatches on it
	// (a test binary standing in for agent-tools) reaches the same entry.
	cmd.Args[0] = os.Args[0]
	cmd.Env = childEnv() // nothing of the server's environment
	cmd.Dir = os.TempDir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, c.stderr
	childAttr(cmd)
	c.cmd = cmd
	c.job, err = startProcess(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.exited)
	}()
	// The child says when its interpreter is ready; until then it is not
	// handed a script.
	ready := make(chan error, 1)
	go func() {
		b, err := readFrame(c.out, MaxFrame)
		if err == nil {
			var m *message
			if m, err = decodeMessage(b); err == nil && m.T != msgReady {
				err = fmt.Errorf("jsrun: %q before ready", m.T)
			}
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(childStartTimeout):
		err = errors.New("jsrun: the script's process did not get ready in time")
	}
	if err != nil {
		c.kill()
		return nil, err
	}
	return c, nil
}

// childStartTimeout bounds a child's start (its interpreter made and warm).
const childStartTimeout = 10 * time.Second

func (c *child) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// kill ends the child (its whole process group) and releases the pipes.
func (c *child) kill() {
	killChild(c.cmd)
	c.in.Close()
	<-c.exited
	c.outF.Close()
	c.job.close()
}

func (c *child) send(m *message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var err error
	c.wbuf, err = writeMessage(c.in, c.wbuf, m)
	return err
}

// Run runs sc in a child: it answers the child's host calls with host and
// returns the child's answer, or the cause of its death in words.
func (p *Pool) Run(ctx context.Context, sc Script, host HostFunc) (*Output, error) {
	start := time.Now()
	sc.Limits = sc.Limits.withDefaults()
	lim := sc.Limits
	limit := lim.Timeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < limit {
		limit = max(0, time.Until(d))
	}
	if ctx.Err() != nil {
		return nil, &Error{Kind: KindCancelled, Message: "the run was cancelled", Cause: ctx.Err()}
	}
	c, err := p.get()
	if err != nil {
		return nil, &Error{Kind: KindInternal, Message: "jsrun: cannot start the script's process: " + err.Error()}
	}
	// After the script, off its caller's path: the child is killed and
	// reaped, then the pool refills (a starting child would have competed
	// with the script for the processor).
	defer func() {
		go func() {
			c.kill()
			p.refill()
		}()
	}()
	if err := c.job.limit(lim); err != nil {
		return nil, &Error{Kind: KindInternal, Message: "jsrun: cannot limit the script's process: " + err.Error()}
	}
	hostCtx, cancelHost := context.WithCancel(ctx)
	defer cancelHost()

	type frame struct {
		m   *message
		err error
	}
	frames := make(chan frame, 1)
	stop := make(chan struct{})
	defer close(stop)
	// The reader serves host calls as they come (each on its own goroutine,
	// at most maxPending at once) and hands everything else to the loop.
	slots := make(chan struct{}, maxPending)
	serve := func(m *message) {
		defer func() { <-slots }()
		ans := &message{T: msgRes, ID: m.ID}
		if host == nil {
			ans.E = "this script has no host"
		} else if d, err := host(hostCtx, m.M, m.D); err != nil {
			ans.E = err.Error()
		} else {
			ans.D = d
		}
		if err := c.send(ans); errors.Is(err, errFrameTooLarge) {
			_ = c.send(&message{T: msgRes, ID: m.ID, E: "the answer is too large"})
		}
	}
	go func() {
		for {
			b, err := readFrame(c.out, MaxFrame)
			var m *message
			if err == nil {
				m, err = decodeMessage(b)
			}
			if err == nil && m.T == msgReq {
				select {
				case slots <- struct{}{}:
					go serve(m)
					continue
				default:
					err = fmt.Errorf("jsrun: the script had more than %d host calls in flight", maxPending)
				}
			}
			select {
			case frames <- frame{m, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	if err := c.send(&message{T: msgRun, Run: &sc}); err != nil {
		if errors.Is(err, errFrameTooLarge) {
			return nil, &Error{Kind: KindLimit, Message: "SyntaxError: the script is too large to run"}
		}
		return nil, c.death(lim, err)
	}
	timer := time.NewTimer(limit + killSlack)
	defer timer.Stop()
	for {
		select {
		case f := <-frames:
			if f.err != nil {
				return nil, c.death(lim, f.err)
			}
			switch f.m.T {
			case msgDone:
				if f.m.Fail != nil {
					return nil, f.m.Fail.error()
				}
				out := f.m.Out
				out.Duration = time.Since(start)
				if out.Console == nil {
					out.Console = []Entry{}
				}
				return out, nil
			default:
				return nil, c.death(lim, fmt.Errorf("jsrun: unexpected %q from the script's process", f.m.T))
			}
		case <-timer.C:
			return nil, &Error{Kind: KindTimeout, Message: fmt.Sprintf("the code did not finish within %s", limit.Round(10*time.Millisecond)),
				Cause: context.DeadlineExceeded}
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, &Error{Kind: KindTimeout, Message: fmt.Sprintf("the code did not finish within %s", limit.Round(10*time.Millisecond)),
					Cause: context.DeadlineExceeded}
			}
			return nil, &Error{Kind: KindCancelled, Message: "the run was cancelled", Cause: ctx.Err()}
		}
	}
}

// death explains why the child stopped answering: a limit in words, or
// the broken pipe.
func (c *child) death(lim Limits, cause error) *Error {
	select {
	case <-c.exited:
	case <-time.After(time.Second):
		// Alive but talking nonsense: end it.
		killChild(c.cmd)
		<-c.exited
	}
	code, sig := exitCause(c.state)
	cpu := c.state.UserTime() + c.state.SystemTime()
	text := c.stderr.String()
	switch {
	case code == exitCPU || sig == "SIGXCPU" || (sig == "SIGKILL" && cpu >= lim.CPU-100*time.Millisecond):
		return &Error{Kind: KindCPU, Message: fmt.Sprintf("the script used more than %s of CPU", lim.CPU)}
	case code == exitMemory || strings.Contains(text, "out of memory") || strings.Contains(text, "cannot allocate memory") || strings.Contains(text, "address space") || strings.Contains(text, "failed to allocate") ||
		strings.Contains(text, "failed to commit pages") || // Windows: a commit past the job's limit
		code == 2 && strings.Contains(text, "memory"):
		return &Error{Kind: KindMemory, Message: fmt.Sprintf("the script used more than %s", sizeText(lim.Memory))}
	case sig != "":
		return &Error{Kind: KindInternal, Message: fmt.Sprintf("the script's process was killed (%s)", sig)}
	}
	return &Error{Kind: KindInternal, Message: fmt.Sprintf("the script's process ended unexpectedly (exit status %d: %v)", code, cause)}
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// tail keeps the first max bytes written (a child's stderr: the runtime's
// fatal error comes first, its goroutine dump after).
type tail struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

var _ io.Writer = (*tail)(nil)
