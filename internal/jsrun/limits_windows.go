//go:build windows

package jsrun

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// A script's process runs in a job object of its own (proc.StartInJob:
// started suspended, joined, then resumed; kill-on-close, no breakaway).
// The server sets the job's limits when it hands the process its script
// (childJob.limit), before it writes the script: a commit limit backing the
// memory watcher, the job's user-mode time from now for code.cpu, and one
// active process. The child checks that they are in force before it runs
// anything (limitSelf). docs: JOBOBJECT_BASIC_LIMIT_INFORMATION,
// JOBOBJECT_EXTENDED_LIMIT_INFORMATION.

// childJob is the job object a child runs in.
type childJob struct{ job *proc.Job }

func startProcess(cmd *exec.Cmd) (childJob, error) {
	j, err := proc.StartInJob(cmd)
	if err != nil {
		return childJob{}, err
	}
	return childJob{j}, nil
}

// jobLimits are the limit flags a script's job has once limit has run.
const jobLimits = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_PROCESS_MEMORY |
	windows.JOB_OBJECT_LIMIT_JOB_TIME | windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS | windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION

// limit sets the script's limits on the job: each process's committed
// memory at what the child committed while it warmed up (the job's
// PeakProcessMemoryUsed) plus twice l.Memory and asSlack; l.CPU of
// user-mode time, which the system counts from now (PerJobUserTimeLimit is
// added to the time the job's processes have used); one active process.
func (c childJob) limit(l Limits) error {
	if c.job == nil {
		return errors.New("jsrun: the script's process has no job object")
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	size := uint32(unsafe.Sizeof(info))
	if err := windows.QueryInformationJobObject(c.job.Handle(), windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), size, nil); err != nil {
		return fmt.Errorf("query job object: %w", err)
	}
	commit := uint64(info.PeakProcessMemoryUsed) + 2*uint64(l.Memory) + asSlack
	info.ProcessMemoryLimit = uintptr(min(commit, uint64(^uintptr(0))))
	info.BasicLimitInformation.LimitFlags |= jobLimits
	info.BasicLimitInformation.PerJobUserTimeLimit = l.CPU.Nanoseconds() / 100 // 100-ns ticks
	info.BasicLimitInformation.ActiveProcessLimit = 1
	if _, err := windows.SetInformationJobObject(c.job.Handle(), windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), size); err != nil {
		return fmt.Errorf("limit job object: %w", err)
	}
	return nil
}

func (c childJob) close() {
	if c.job != nil {
		_ = c.job.Close()
	}
}

// limitSelf checks that the server set this process's job limits before it
// sent the script (a zero handle queries the caller's own job): an
// unlimited child must not run hostile code.
func limitSelf(Limits) error {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if err := windows.QueryInformationJobObject(0, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return fmt.Errorf("query own job object: %w", err)
	}
	if info.BasicLimitInformation.LimitFlags&jobLimits != jobLimits {
		return fmt.Errorf("the job object's limits are not set (flags %#x)", info.BasicLimitInformation.LimitFlags)
	}
	return nil
}

// prepareLimits reads the runtime metrics once (which builds their
// tables) while the child waits.
func prepareLimits() error {
	metrics.Read(memorySamples())
	return nil
}

// closeInherited: a Windows child inherits only the handles the server
// passes explicitly (its three pipes).
func closeInherited() {}

func pollable(f *os.File) *os.File { return f }

// childAttr: proc.StartInJob sets the creation flags.
func childAttr(*exec.Cmd) {}

// killChild terminates the child; closing its job (childJob.close) ends
// anything left in it.
func killChild(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// exitCause describes how a child ended. The job's user-mode time limit
// terminates its processes with ERROR_NOT_ENOUGH_QUOTA, read as the CPU
// limit.
func exitCause(st *os.ProcessState) (int, string) {
	if code := st.ExitCode(); code != int(windows.ERROR_NOT_ENOUGH_QUOTA) {
		return code, ""
	}
	return exitCPU, ""
}

func isolation() (bool, string) { return true, describeLimits(runtime.GOOS) }
