//go:build !unix && !windows

package mcp

import (
	"errors"
	"os/exec"
	"time"
)

// sysProcess: this build cannot run a stdio upstream.
type sysProcess struct{}

func findProgram(procSpec) (string, error) {
	return "", errors.New("stdio MCP upstreams need a Unix system in this build; use an HTTP upstream")
}

func startChild(*exec.Cmd) (sysProcess, error) { return sysProcess{}, errors.ErrUnsupported }
func (sysProcess) reap(*exec.Cmd)              {}
func (sysProcess) release()                    {}
func (sysProcess) end(*process, time.Duration) {}
