//go:build unix

package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Run starts s and waits for it. The process gets its own process group; on
// timeout or ctx cancellation the whole group gets SIGTERM, then SIGKILL after
// s.Grace, or as soon as the leader has exited, whichever comes first. When the
// leader exits by itself, processes it left behind are not signalled, but Run
// stops reading their output pipes after a short delay (a background
// grandchild holding stdout cannot hang the call).
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

	var cmd *exec.Cmd
	var stdout, stderr *capture
	start := time.Now()
	for attempt := 0; ; attempt++ {
		stdout = &capture{max: s.MaxOutput}
		stderr = &capture{max: s.MaxOutput}
		cmd = build(s, path, stdout, stderr)
		err = cmd.Start()
		// ETXTBSY: another goroutine of this process forked while a file it had
		// open for writing was this executable (go.dev/issue/22315), or an editor
		// is saving the file right now. Nothing ran: retry briefly.
		if err == nil || !errors.Is(err, syscall.ETXTBSY) || attempt == 8 || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(5<<attempt) * time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("proc: cannot start %s: %w", s.Path, err)
	}

	pgid := cmd.Process.Pid
	w := newWaiter(cmd)
	res := &Result{}

	var deadline <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	kill := false
	select {
	case <-w.exited:
	case <-ctx.Done():
		res.Cancelled, kill = true, true
	case <-deadline:
		res.TimedOut, kill = true, true
	}
	if kill {
		killGroup(pgid, s.Grace, w.exited)
	}
	waitErr := w.finish()
	res.Duration = time.Since(start)

	res.Stdout, res.StdoutTruncated = stdout.buf, stdout.dropped
	res.Stderr, res.StderrTruncated = stderr.buf, stderr.dropped
	res.ExitCode = -1
	if st := cmd.ProcessState; st != nil {
		res.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	}
	// waitErr is an *exec.ExitError (already in ExitCode), exec.ErrWaitDelay
	// (a leftover process held the pipes; its output was cut) or an I/O error
	// of the copying goroutines, which cannot fail on our side. None of them
	// means "could not start".
	_ = waitErr
	return res, nil
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

func build(s Spec, path string, stdout, stderr *capture) *exec.Cmd {
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{s.Path}, s.Args...),
		Dir:         s.Dir,
		Env:         s.Env,
		Stdout:      stdout,
		Stderr:      stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		WaitDelay:   pipeWaitDelay,
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
func resolve(s Spec) (string, error) {
	if s.Path == "" {
		return "", fmt.Errorf("proc: cannot start: empty path: %w", fs.ErrNotExist)
	}
	if strings.Contains(s.Path, "/") {
		return s.Path, nil
	}
	pathEnv := ""
	for _, kv := range s.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v // the last one wins, as in the child
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue // never resolve through "." or relative entries
		}
		p := filepath.Join(dir, s.Path)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("proc: cannot start %s: %w in PATH %q", s.Path, exec.ErrNotFound, pathEnv)
}
