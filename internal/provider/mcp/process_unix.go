//go:build unix

package mcp

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// sysProcess is the child's process group: the child leads it, and the
// whole group is killed when the leader exits, so nothing it spawned
// outlives it.
type sysProcess struct{ pid int }

// findProgram resolves the command in the child's PATH.
func findProgram(spec procSpec) (string, error) { return lookPath(spec) }

// startChild starts cmd in a process group of its own.
func startChild(cmd *exec.Cmd) (sysProcess, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	for attempt := 0; ; attempt++ {
		err = cmd.Start()
		// ETXTBSY: another goroutine forked while holding this executable open
		// for writing (go.dev/issue/22315), e.g. a server built a moment ago.
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || attempt == 8 {
			break
		}
		time.Sleep(time.Duration(5<<attempt) * time.Millisecond)
		*cmd = exec.Cmd{Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Env: cmd.Env, Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, SysProcAttr: cmd.SysProcAttr}
	}
	if err != nil {
		return sysProcess{}, err
	}
	return sysProcess{pid: cmd.Process.Pid}, nil
}

// reap waits for the leader, then kills its group.
func (s sysProcess) reap(cmd *exec.Cmd) {
	// On Linux the leader is not reaped yet here, so its group id cannot
	// have been reused when the group is killed.
	reaped := waitLeader(cmd)
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	if !reaped {
		_ = cmd.Wait()
	}
}

func (sysProcess) release() {}

// end sends SIGTERM to the group, then SIGKILL after grace.
func (s sysProcess) end(pr *process, grace time.Duration) {
	_ = syscall.Kill(-s.pid, syscall.SIGTERM)
	if pr.waitFor(grace) {
		return
	}
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
}
