//go:build !unix

package testutil

import (
	"os"
	"testing"
	"time"
)

// Gone reports whether pid no longer runs (the process cannot be opened).
func Gone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	_ = p.Release()
	return false
}

// WaitGone waits up to three seconds for pid to end; a survivor is killed
// (so a failing test leaks nothing) and fails the test.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !Gone(pid) {
		if time.Now().After(deadline) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
