package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// process is a stdio upstream: a child the platform keeps together with
// what it starts (a process group, a job object: sysProcess), with pipes
// for stdin and stdout and a bounded tail of its stderr. What differs by
// platform is in process_<os>.go: finding the program, starting it, reaping
// it and ending it; the rest is here.
type process struct {
	cmd    *exec.Cmd
	sys    sysProcess
	stdin  *os.File // our end
	stdout *os.File // our end
	stderr *tailBuffer
	exited chan struct{} // closed once the child is reaped and what it started ended
	status string        // how it ended ("exit status 3"), set before exited closes
}

// startProcess starts the child; what it spawned ends with it.
func startProcess(spec procSpec) (*process, error) {
	path, err := findProgram(spec)
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
	sys, err := startChild(cmd)
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	pr := &process{cmd: cmd, sys: sys, stdin: inW, stdout: outR, stderr: newTailBuffer(8 << 10), exited: make(chan struct{})}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		pr.stderr.drain(errR)
	}()
	go func() {
		sys.reap(cmd)
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
		sys.release()
		close(pr.exited)
	}()
	return pr, nil
}

// stop ends the process: EOF on stdin (a well-behaved server exits), then,
// after grace, what the platform does to end it (sysProcess.end).
func (pr *process) stop(grace time.Duration) {
	pr.stdin.Close()
	if pr.waitFor(grace) {
		return
	}
	pr.sys.end(pr, grace)
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
