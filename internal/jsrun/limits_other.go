//go:build !unix && !windows

package jsrun

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
)

// On this system a child process cannot be given the limits: scripts run
// in process, and doctor says so (processLimits).

func limitSelf(Limits) error { return errors.New("no process limits on this system") }

func watchMemory(int64) {}

func prepareLimits() error { return nil }

func closeInherited() {}

func pollable(f *os.File) *os.File { return f }

func childAttr(*exec.Cmd) {}

func killChild(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func exitCause(st *os.ProcessState) (int, string) { return st.ExitCode(), "" }

func isolation() (bool, string) { return false, describeLimits(runtime.GOOS) }

type childJob struct{}

func startProcess(cmd *exec.Cmd) (childJob, error) { return childJob{}, cmd.Start() }

func (childJob) limit(Limits) error { return nil }

func (childJob) close() {}
