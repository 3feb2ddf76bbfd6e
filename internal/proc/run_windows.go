//go:build windows

package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Containment says how Run contains the processes of a call, for doctor.
func Containment() string {
	return "job object: each call runs in its own Windows job (kill-on-close, no breakaway), terminated whole when the call ends"
}

// SweepAll has nothing to do on Windows: every run's job is terminated when
// the run ends, and a job closes (killing what is left) with the runtime.
func SweepAll() int { return 0 }

var runSeq atomic.Uint64

// Run starts s and waits for it. The process starts suspended, joins a job
// object of its own (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, breakaway not
// allowed) and only then runs, so every process it starts is in the job
// too. On timeout or ctx cancellation the leader gets CTRL_BREAK (it has its
// own process group), then the job is terminated after s.Grace or as soon
// as the leader exits. When the leader exits by itself, whatever it left in
// the job is terminated: a call owns its processes for its duration only.
//
// Output is read by os/exec; when something outside the job still holds a
// pipe, Run stops after a short delay and sets Result.OutputIncomplete.
// Errors are as on Unix: non-nil only when the process could not start.
func Run(ctx context.Context, s Spec) (*Result, error) {
	s = s.withDefaults()
	if ctx.Err() != nil {
		return &Result{ExitCode: -1, Cancelled: true}, nil
	}
	path, err := LookPath(s.Path, s.Env)
	if err != nil {
		return nil, err
	}
	args := append([]string{s.Path}, s.Args...)
	if argv, ok := windowsInterpreter(path); ok {
		// A script with a #! line (a repository's .agents/tools): Windows
		// runs no interpreter line, so the runtime does what the kernel
		// would, with the interpreter found on PATH.
		interp, err := LookPath(argv[0], s.Env)
		if err != nil {
			return nil, fmt.Errorf("proc: %s needs %s (its #! line), not found on PATH: %w", s.Path, argv[0], err)
		}
		path, args = interp, append(append(argv, s.Path), s.Args...)
	}
	marker := trackVar + "=" + strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(runSeq.Add(1), 10)
	env := append(slices.Clip(s.Env), marker)
	stdout := &capture{max: s.MaxOutput, tee: s.OnStdout}
	stderr := &capture{max: s.MaxOutput}
	cmd := &exec.Cmd{
		Path:      path,
		Args:      args,
		Dir:       s.Dir,
		Env:       env,
		Stdout:    stdout,
		Stderr:    stderr,
		WaitDelay: pipeWaitDelay,
	}
	if s.Stdin != nil {
		cmd.Stdin = bytes.NewReader(s.Stdin)
	}
	began := time.Now()
	job, err := StartInJob(cmd)
	if err != nil {
		return nil, fmt.Errorf("proc: cannot start %s: %w", s.Path, err)
	}
	defer job.Close() // kill-on-close: nothing of the call survives it
	leader := job.proc
	exited := make(chan struct{})
	go func() {
		_, _ = windows.WaitForSingleObject(leader, windows.INFINITE)
		close(exited)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	res := &Result{}
	var deadline <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	killed := false
	select {
	case <-exited:
	case <-ctx.Done():
		res.Cancelled, killed = true, stopLeader(cmd.Process.Pid, s.Grace, exited)
	case <-deadline:
		res.TimedOut, killed = true, stopLeader(cmd.Process.Pid, s.Grace, exited)
	}
	_ = job.Terminate() // what the leader left behind
	werr := <-waited
	res.OutputIncomplete = errors.Is(werr, exec.ErrWaitDelay)
	res.Duration = time.Since(began)
	res.Stdout, res.StdoutTruncated = stdout.buf, stdout.dropped
	res.Stderr, res.StderrTruncated = stderr.buf, stderr.dropped
	res.ExitCode = -1
	if ps := cmd.ProcessState; ps != nil && !killed {
		res.ExitCode = ps.ExitCode()
	}
	if killed {
		res.Signal = syscall.SIGKILL // terminated, as a SIGKILL on Unix
	}
	return res, nil
}

// stopLeader asks the leader to stop (CTRL_BREAK to its process group,
// which reaches console programs sharing our console) and waits up to grace
// for it; it reports whether the job must be terminated under it.
func stopLeader(pid int, grace time.Duration, exited <-chan struct{}) (killed bool) {
	if grace > 0 && windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid)) == nil {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-exited:
			return false
		case <-t.C:
		}
	}
	return true
}

// Job is a Windows job object that holds a process and everything it
// starts: kill-on-close, no breakaway.
type Job struct {
	h    windows.Handle
	proc windows.Handle // the process started in it (SYNCHRONIZE: wait on it)
}

// StartInJob starts cmd suspended in a new job, then lets it run, so that
// every process it starts is in the job too. It adds CREATE_SUSPENDED and
// CREATE_NEW_PROCESS_GROUP to cmd's creation flags. Close the job when the
// process is done: what is left in it is killed.
func StartInJob(cmd *exec.Cmd) (*Job, error) {
	h, err := newJob()
	if err != nil {
		return nil, fmt.Errorf("job object: %w", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(h)
		return nil, err
	}
	p, err := joinAndResume(h, cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		windows.CloseHandle(h)
		return nil, err
	}
	return &Job{h: h, proc: p}, nil
}

// Handle is the job object's handle, for setting further limits
// (SetInformationJobObject); it is the job's until Close.
func (j *Job) Handle() windows.Handle { return j.h }

// Terminate kills every process in the job.
func (j *Job) Terminate() error { return windows.TerminateJobObject(j.h, 1) }

// Close kills what is left in the job and releases it.
func (j *Job) Close() error {
	windows.CloseHandle(j.proc)
	return windows.CloseHandle(j.h)
}

// newJob is a job object whose processes die when its last handle closes
// and cannot break away from it.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// joinAndResume puts the suspended process pid in job, then lets it run;
// the returned handle waits for it.
func joinAndResume(job windows.Handle, pid int) (windows.Handle, error) {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME|windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0, fmt.Errorf("open process: %w", err)
	}
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(h)
		return 0, fmt.Errorf("assign to job: %w", err)
	}
	if st, _, _ := ntResumeProcess.Call(uintptr(h)); st != 0 {
		windows.CloseHandle(h)
		return 0, fmt.Errorf("resume: NTSTATUS %#x", st)
	}
	return h, nil
}

// windowsInterpreter is the #! line of a file Windows cannot run itself
// (not .exe, .com, .cmd or .bat).
func windowsInterpreter(path string) ([]string, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".exe", ".com", ".cmd", ".bat":
		return nil, false
	}
	argv, err := Shebang(path)
	return argv, err == nil
}
