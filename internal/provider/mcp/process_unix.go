//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is a stdio upstream: a child in its own process group, with pipes
// for stdin and stdout and a bounded tail of its stderr.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File // our end
	stdout *os.File // our end
	stderr *tailBuffer
	exited chan struct{} // closed once the leader is reaped and its group killed
	status string        // how it ended ("exit status 3"), set before exited closes
}

// startProcess starts the child. Its whole group is killed when the leader
// exits, so nothing it spawned outlives it.
func startProcess(spec procSpec) (*process, error) {
	path, err := lookPath(spec)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: path, Args: append([]string{spec.command}, spec.args...), Dir: spec.dir, Env: spec.env,
		Stdin: inR, Stdout: outW, Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	for attempt := 0; ; attempt++ {
		err = cmd.Start()
		// ETXTBSY: another goroutine forked while holding this executable open
		// for writing (go.dev/issue/22315), e.g. a server built a moment ago.
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || attempt == 8 {
			break
		}
		time.Sleep(time.Duration(5<<attempt) * time.Millisecond)
		cmd = &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Env: cmd.Env, Stdin: inR, Stdout: outW, Stderr: errW, SysProcAttr: cmd.SysProcAttr}
	}
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	pr := &process{cmd: cmd, pid: cmd.Process.Pid, stdin: inW, stdout: outR, stderr: newTailBuffer(8 << 10), exited: make(chan struct{})}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		pr.stderr.drain(errR)
	}()
	go func() {
		// On Linux the leader is not reaped yet here, so its group id cannot
		// have been reused when the group is killed.
		reaped := waitLeader(cmd)
		_ = syscall.Kill(-pr.pid, syscall.SIGKILL)
		if !reaped {
			_ = cmd.Wait()
		}
		if st := cmd.ProcessState; st != nil {
			pr.status = st.String()
		} else {
			pr.status = "ended"
		}
		select { // its last words, unless something it left behind still holds stderr
		case <-stderrDone:
		case <-time.After(200 * time.Millisecond):
		}
		errR.Close()
		close(pr.exited)
	}()
	return pr, nil
}

// stop ends the process: EOF on stdin (a well-behaved server exits), then
// SIGTERM to the group, then SIGKILL, each after grace.
func (pr *process) stop(grace time.Duration) {
	pr.stdin.Close()
	if pr.waitFor(grace) {
		return
	}
	_ = syscall.Kill(-pr.pid, syscall.SIGTERM)
	if pr.waitFor(grace) {
		return
	}
	_ = syscall.Kill(-pr.pid, syscall.SIGKILL)
	<-pr.exited
}

func (pr *process) waitFor(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-pr.exited:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pr.exited:
		return true
	case <-t.C:
		return false
	}
}

// describe says how the process ended, with the tail of its stderr.
func (pr *process) describe() string {
	s := pr.status
	if s == "" {
		s = "still running"
	}
	if t := pr.stderr.lastLines(400); t != "" {
		s += fmt.Sprintf("; stderr: %s", t)
	}
	return s
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
