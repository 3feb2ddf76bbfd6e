//go:build !linux

package index

import "time"

// threadCPU is unavailable off Linux: the benchmarks then report wall time only.
func threadCPU() (time.Duration, bool) { return 0, false }
