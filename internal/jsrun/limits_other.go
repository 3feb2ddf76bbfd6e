//go:build !unix

package jsrun

import (
	"errors"
	"os"
	"os/exec"
)

// On this system a child process cannot be given the limits (a job object
// with a memory limit is not wired up yet): scripts run in process, and
// doctor says so.

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

func isolation() (bool, string) {
	return false, "scripts run inside the server: this system has no per-process memory limit wired up (Windows job objects are not used yet), " +
		"so a script's memory is bounded only by the in-process heap sampler"
}
