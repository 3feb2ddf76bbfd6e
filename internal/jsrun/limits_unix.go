//go:build unix

package jsrun

import (
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// childFiles bounds the descriptors a child may hold: it opens none itself.
const childFiles = 32

// limitSelf applies the script's limits to this (child) process before the
// script runs: processor time counted from now and an address-space
// backstop (prepareLimits set the descriptor limit). The memory limit
// itself is watchMemory's: Go's runtime maps its heap in large steps (a 40
// MiB string may need a fresh 64 MiB arena), so an address-space limit set
// at the memory limit fails scripts well below it. The backstop (the space
// mapped while the child waited, twice the limit, and asSlack, which also
// covers reading the script) stops what the watcher cannot see in time:
// one native call allocating far past the limit.
func limitSelf(l Limits) error {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	soft := uint64(math.Ceil((used + l.CPU).Seconds()))
	if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: soft, Max: soft + 1}); err != nil {
		return err
	}
	if waiting > 0 {
		as := uint64(waiting) + 2*uint64(l.Memory) + asSlack
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}); err != nil {
			return err
		}
	}
	return nil
}

// waiting is the address space the child had mapped when it was ready
// (0: unknown), measured by prepareLimits.
var waiting int64

// prepareLimits does, while the child waits for its script, what need not
// wait for the script's limits: the SIGXCPU handler (exit with exitCPU),
// the runtime metrics' first read (which builds their tables), no new
// descriptors beyond a few, and the address space to count the backstop
// from. A failure leaves the child unready: it never runs a script.
func prepareLimits() error {
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, unix.SIGXCPU)
	go func() {
		<-xcpu
		os.Exit(exitCPU)
	}()
	metrics.Read(memorySamples())
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: childFiles, Max: childFiles}); err != nil {
		return err
	}
	waiting = mappedBytes()
	return nil
}

// pollable is f (a pipe end) made non-blocking and handed to the runtime's
// poller: a reader waiting on it parks in the poller rather than holding a
// thread in read(2), so an answer wakes one thread, which runs the reader
// and then the goroutine it hands the answer to. The child's ends of its
// pipes are its own (the parent closed its copies), so nothing else sees
// the flag.
func pollable(f *os.File) *os.File {
	fd := f.Fd()
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		return f
	}
	return os.NewFile(fd, f.Name())
}

// childAttr puts the child in its own process group, so the parent kills
// the whole group. A child whose server died reads the end of its stdin and
// exits (no Pdeathsig: it fires when the forking thread ends, not the
// process).
func childAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killChild kills the child's process group.
func killChild(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// exitCause describes how a child ended: its exit status, or the signal
// that killed it ("" when it exited).
func exitCause(st *os.ProcessState) (code int, signal string) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		sig := ws.Signal()
		switch sig {
		case syscall.SIGKILL:
			return -1, "SIGKILL"
		case unix.SIGXCPU:
			return -1, "SIGXCPU"
		}
		return -1, sig.String()
	}
	return st.ExitCode(), ""
}

// isolation says whether scripts can run in a limited child process here.
func isolation() (bool, string) {
	return true, describeLimits(runtime.GOOS)
}

// childJob is nothing here: the child limits itself (limitSelf).
type childJob struct{}

func startProcess(cmd *exec.Cmd) (childJob, error) { return childJob{}, cmd.Start() }

func (childJob) limit(Limits) error { return nil }

func (childJob) close() {}
