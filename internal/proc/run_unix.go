//go:build unix

package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Run starts s and waits for it. The process gets its own process group (and,
// on Linux with a delegated cgroup v2, its own cgroup; see [Containment]). On
// timeout or ctx cancellation the whole group gets SIGTERM, then SIGKILL after
// s.Grace, or as soon as the leader has exited, whichever comes first. When the
// leader exits by itself, whatever it left in its group (and cgroup) is killed:
// a call owns its processes for its duration only.
//
// Output the processes wrote is always delivered: Run reads each pipe to EOF.
// Only when something outside the group still holds a pipe open (a setsid
// descendant without cgroups) does Run stop waiting after a short delay; it
// then keeps what the pipe held and sets Result.OutputIncomplete.
//
// The error is non-nil only when the process could not be started (not found,
// not executable, bad Dir...); it names the path and wraps the cause, so
// errors.Is(err, fs.ErrNotExist) and friends work. Everything else, including
// non-zero exits, timeouts and cancellation, is reported in the Result.
func Run(ctx context.Context, s Spec) (*Result, error) {
	s = s.withDefaults()
	if ctx.Err() != nil {
		return &Result{ExitCode: -1, Cancelled: true}, nil
	}
	path, err := resolve(s)
	if err != nil {
		return nil, err
	}

	st, err := start(ctx, s, path)
	if err != nil {
		return nil, fmt.Errorf("proc: cannot start %s: %w", s.Path, err)
	}
	cmd := st.cmd
	pgid := cmd.Process.Pid
	w := newWaiter(cmd)
	res := &Result{}

	var deadline <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-w.exited:
		// The leader is gone (not yet reaped on Linux, so pgid is still
		// reserved): end what it left behind. The group is stopped first,
		// so that none of it acts on the deaths of the rest of the family
		// before its own (see stopThenKill).
		if st.cg == nil {
			_ = syscall.Kill(-pgid, syscall.SIGSTOP)
			sweepFamily(pgid, st.marker)
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	case <-ctx.Done():
		res.Cancelled = true
		if st.cg == nil {
			sweepFamily(pgid, st.marker) // while the tree is whole
		}
		killGroup(pgid, s.Grace, w.exited)
	case <-deadline:
		res.TimedOut = true
		if st.cg == nil {
			sweepFamily(pgid, st.marker)
		}
		killGroup(pgid, s.Grace, w.exited)
	}
	if st.cg == nil {
		sweepFamily(pgid, st.marker) // what was forked meanwhile
	}
	st.cg.release()
	// The error of Wait is an *exec.ExitError (read from ProcessState below)
	// or exec.ErrWaitDelay from the stdin copier; neither means "not started".
	_ = w.finish()
	dropLeader(pgid) // reaped: no sweep may take it for an adopted orphan before

	if st.cg == nil {
		// Without a cgroup, descendants that left the group (setsid) are
		// found by the marker in their environment: no process a run
		// started outlives it. Whatever such a process held open (a pipe)
		// is closed by its death, so the drains below end promptly.
		sweep(st.marker, false, pgid)
	}
	outCut := st.stdout.stop(pipeWaitDelay)
	errCut := st.stderr.stop(pipeWaitDelay)
	res.OutputIncomplete = outCut || errCut
	res.Duration = time.Since(st.began)

	res.Stdout, res.StdoutTruncated = st.stdout.c.buf, st.stdout.c.dropped
	res.Stderr, res.StderrTruncated = st.stderr.c.buf, st.stderr.c.dropped
	res.ExitCode = -1
	if ps := cmd.ProcessState; ps != nil {
		res.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	}
	return res, nil
}

var runSeq atomic.Uint64

// leaders are the pids of the runs in flight; leadersMu is held for
// reading while a run starts and registers its leader, and for writing
// while this process's children are classified (sweepFamily), so that a
// leader just started is never taken for an adopted orphan.
var (
	leadersMu sync.RWMutex
	leaders   = map[int]bool{}
)

// addLeader registers pid; call under leadersMu.RLock (writes to the map
// are serialised by leadersAddMu: several runs start at once).
func addLeader(pid int) {
	leadersAddMu.Lock()
	leaders[pid] = true
	leadersAddMu.Unlock()
}

var leadersAddMu sync.Mutex

func dropLeader(pid int) {
	leadersMu.Lock()
	delete(leaders, pid)
	leadersMu.Unlock()
}

// started is a running process with the pipes Run drains.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr *drain
	cg             *cgroup
	marker         []byte // trackVar entry of this run's environment
	began          time.Time
}

func start(ctx context.Context, s Spec, path string) (*started, error) {
	for attempt := 0; ; attempt++ {
		st, err := startOnce(s, path)
		// ETXTBSY: another goroutine of this process forked while a file it had
		// open for writing was this executable (go.dev/issue/22315), or an editor
		// is saving the file right now. Nothing ran: retry briefly.
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || attempt == 8 || ctx.Err() != nil {
			return st, err
		}
		time.Sleep(time.Duration(5<<attempt) * time.Millisecond)
	}
}

func startOnce(s Spec, path string) (*started, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return nil, err
	}
	cg := newCgroup()
	marker := trackVar + "=" + strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(runSeq.Add(1), 10)
	s.Env = append(slices.Clip(s.Env), marker)
	cmd := build(s, path, outW, errW)
	cg.apply(cmd.SysProcAttr)
	began := time.Now()
	// A run's leader is registered before anything classifies this
	// process's children again (see sweepFamily).
	leadersMu.RLock()
	err = cmd.Start()
	if err != nil && cg != nil {
		// The cgroup could not take the child (e.g. controllers enabled in
		// our own cgroup): run it with the process group alone.
		cg.release()
		cg = nil
		cmd = build(s, path, outW, errW)
		err = cmd.Start()
	}
	if err == nil {
		addLeader(cmd.Process.Pid)
		if cg == nil {
			subreaper() // before the leader can fork: orphans come to us
		}
	}
	leadersMu.RUnlock()
	// The child has its copies of the write ends (or never will): keeping
	// ours open would keep the pipes from ever reaching EOF.
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		return nil, err
	}
	return &started{
		cmd:    cmd,
		stdout: startDrain(outR, &capture{max: s.MaxOutput, tee: s.OnStdout}),
		stderr: startDrain(errR, &capture{max: s.MaxOutput}),
		cg:     cg,
		marker: []byte(marker),
		began:  began,
	}, nil
}

// killGroup sends SIGTERM to the group and waits up to grace for the leader
// to exit, then SIGKILLs the whole group and waits for the leader. The grace
// period belongs to the leader: once it has exited, whatever it left in the
// group is killed at once (a leader that wants its children to shut down
// cleanly traps TERM and waits for them). On Linux the leader is not reaped
// before the SIGKILL, so the group id cannot have been reused.
func killGroup(pgid int, grace time.Duration, exited <-chan struct{}) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	select {
	case <-exited:
	case <-t.C:
	}
	t.Stop()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
}

func build(s Spec, path string, stdout, stderr *os.File) *exec.Cmd {
	cmd := &exec.Cmd{
		Path:   path,
		Args:   append([]string{s.Path}, s.Args...),
		Dir:    s.Dir,
		Env:    s.Env,
		Stdout: stdout,
		Stderr: stderr,
		// A session of its own (and so a process group): a descendant
		// that only changes its group is still found by the session.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
		// Bounds only the stdin copier (stdout/stderr are our own pipes): a
		// leftover process that holds stdin without reading cannot hang Wait.
		WaitDelay: pipeWaitDelay,
	}
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would inherit os.Environ()
	}
	if s.Stdin != nil {
		cmd.Stdin = bytes.NewReader(s.Stdin)
	}
	return cmd
}

// resolve applies the PATH lookup for a bare name, using the child's PATH.
func resolve(s Spec) (string, error) { return LookPath(s.Path, s.Env) }
