//go:build windows

package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// process is a stdio upstream: a child in a job object of its own (so that
// what it starts ends with it), with pipes for stdin and stdout and a
// bounded tail of its stderr.
type process struct {
	cmd    *exec.Cmd
	job    *proc.Job
	stdin  *os.File // our end
	stdout *os.File // our end
	stderr *tailBuffer
	exited chan struct{} // closed once the child is reaped and its job terminated
	status string        // how it ended ("exit status 3"), set before exited closes
}

// startProcess starts the child, found in its own PATH with PATHEXT (so
// "npx" is npx.cmd). Its whole job is terminated when it exits.
func startProcess(spec procSpec) (*process, error) {
	path, err := proc.LookPath(spec.command, spec.env)
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
	}
	job, err := proc.StartInJob(cmd)
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	pr := &process{cmd: cmd, job: job, stdin: inW, stdout: outR, stderr: newTailBuffer(8 << 10), exited: make(chan struct{})}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		pr.stderr.drain(errR)
	}()
	go func() {
		_ = cmd.Wait()
		_ = job.Terminate()
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
		_ = job.Close()
		close(pr.exited)
	}()
	return pr, nil
}

// stop ends the process: EOF on stdin (a well-behaved server exits), then,
// after grace, its whole job is terminated (Windows has no SIGTERM).
func (pr *process) stop(grace time.Duration) {
	pr.stdin.Close()
	if pr.waitFor(grace) {
		return
	}
	_ = pr.job.Terminate()
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
