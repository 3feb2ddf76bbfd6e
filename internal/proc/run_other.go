//go:build !unix

package proc

import (
	"context"
	"errors"
	"fmt"
)

// Run is only implemented on Unix (process groups and signals).
func Run(ctx context.Context, s Spec) (*Result, error) {
	return nil, fmt.Errorf("proc: cannot start %s: %w", s.Path, errors.ErrUnsupported)
}
