//go:build windows

package mcp

import (
	"os/exec"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
)

// sysProcess is the child's job object: what it starts ends with it.
type sysProcess struct{ job *proc.Job }

// findProgram resolves the command in the child's own PATH with PATHEXT
// (so "npx" is npx.cmd).
func findProgram(spec procSpec) (string, error) { return proc.LookPath(spec.command, spec.env) }

// startChild starts cmd in a job object of its own.
func startChild(cmd *exec.Cmd) (sysProcess, error) {
	job, err := proc.StartInJob(cmd)
	return sysProcess{job: job}, err
}

// reap waits for the child, then terminates its whole job.
func (s sysProcess) reap(cmd *exec.Cmd) {
	_ = cmd.Wait()
	_ = s.job.Terminate()
}

func (s sysProcess) release() { _ = s.job.Close() }

// end terminates the whole job (Windows has no SIGTERM).
func (s sysProcess) end(*process, time.Duration) { _ = s.job.Terminate() }
