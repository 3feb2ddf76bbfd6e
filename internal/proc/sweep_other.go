//go:build unix && !linux

package proc

// sweep is Linux-only (/proc/<pid>/environ).
func sweep([]byte, bool, int) int { return 0 }

// SweepAll is Linux-only; elsewhere descendants that left the process group
// can outlive the runtime.
func SweepAll() int { return 0 }

// sweepFamily is Linux-only (/proc): elsewhere the process group alone.
func sweepFamily(int, []byte) int { return 0 }

// subreaper is Linux-only.
func subreaper() bool { return false }
