//go:build !unix && !windows

package mcp

import (
	"errors"
	"os"
	"time"
)

// process is a stdio upstream; this build cannot run one.
type process struct {
	stdin, stdout *os.File
	stderr        *tailBuffer
	exited        chan struct{}
}

func startProcess(procSpec) (*process, error) {
	return nil, errors.New("stdio MCP upstreams need a Unix system in this build; use an HTTP upstream")
}

func (pr *process) stop(time.Duration)         {}
func (pr *process) waitFor(time.Duration) bool { return true }
func (pr *process) describe() string           { return "not started" }
