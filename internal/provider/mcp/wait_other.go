//go:build unix && !linux

package mcp

import "os/exec"

// waitLeader reaps the process when it exits (no waitid WNOWAIT here).
func waitLeader(cmd *exec.Cmd) (reaped bool) {
	_ = cmd.Wait()
	return true
}
