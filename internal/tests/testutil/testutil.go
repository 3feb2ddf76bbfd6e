// Package testutil holds the helpers tests of several packages share: a
// concurrency-safe buffer for logs and child output, bounded polling for
// conditions no signal announces, process liveness, the error-envelope
// check, and per-item snapshot files (snapshot.go). It is imported by tests
// only.
package testutil

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// SyncBuffer is an io.Writer safe for concurrent writes (a log sink, a
// child's stderr) whose content can be read while it is written.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WaitFor polls cond every few milliseconds until it holds, failing the
// test after timeout. Use it only for state no channel or callback
// announces (a process table, a file another process writes).
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
			return
		case <-tick.C:
		}
	}
}

// WantCode fails the test unless err is a teaching error with code, and
// returns it.
func WantCode(t testing.TB, err error, code toolerr.Code) *toolerr.Error {
	t.Helper()
	te, ok := toolerr.As(err)
	if !ok || te.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
	return te
}
