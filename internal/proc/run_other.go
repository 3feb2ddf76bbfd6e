//go:build !unix && !windows

package proc

import (
	"context"
	"errors"
	"fmt"
)

// Run is implemented on Unix (process groups, cgroups on Linux) and
// Windows (job objects).
func Run(ctx context.Context, s Spec) (*Result, error) {
	return nil, fmt.Errorf("proc: cannot start %s: %w", s.Path, errors.ErrUnsupported)
}

// Containment says how Run contains the processes of a call, for doctor.
func Containment() string {
	return "none: this system cannot run processes in this build"
}

// SweepAll has nothing to sweep here.
func SweepAll() int { return 0 }
