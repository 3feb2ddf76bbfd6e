package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.fatal = true
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func TestSnapshots(t *testing.T) {
	dir := t.TempDir()
	items := map[string]any{"alpha": map[string]any{"b": 2, "a": 1}, "beta": []string{"x"}}

	r := &recorder{TB: t}
	Snapshots(r, dir, true, items)
	if len(r.errs) != 0 {
		t.Fatalf("update failed: %v", r.errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "alpha.snap"))
	if string(b) != "{\n  \"a\": 1,\n  \"b\": 2\n}\n" {
		t.Fatalf("alpha.snap = %q", b)
	}

	tests := []struct {
		name  string
		items map[string]any
		n     int      // failures
		want  []string // substrings of the failures
	}{
		{"unchanged", items, 0, nil},
		{"changed shows a diff", map[string]any{"alpha": map[string]any{"a": 1, "b": 3}, "beta": []string{"x"}},
			1, []string{"alpha.snap changed", "-  \"b\": 2\n+  \"b\": 3"}},
		{"missing", map[string]any{"alpha": items["alpha"], "beta": items["beta"], "gamma": 1},
			1, []string{"missing snapshot " + filepath.Join(dir, "gamma.snap")}},
		{"stale", map[string]any{"alpha": items["alpha"]},
			1, []string{`is for "beta", which no longer exists`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			Snapshots(r, dir, false, tt.items)
			if len(r.errs) != tt.n {
				t.Fatalf("failures = %q, want %d", r.errs, tt.n)
			}
			all := strings.Join(r.errs, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("failures %q lack %q", all, w)
				}
			}
		})
	}

	// -update removes the stale snapshot and writes the new one.
	Snapshots(&recorder{TB: t}, dir, true, map[string]any{"alpha": items["alpha"], "gamma": 1})
	if _, err := os.Stat(filepath.Join(dir, "beta.snap")); !os.IsNotExist(err) {
		t.Errorf("stale beta.snap survived -update: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "gamma.snap")); string(b) != "1\n" {
		t.Errorf("gamma.snap = %q", b)
	}
}

func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	done := make(chan struct{})
	for i := range 4 {
		go func() {
			fmt.Fprintf(&b, "w%d;", i)
			done <- struct{}{}
		}()
	}
	for range 4 {
		<-done
	}
	if got := b.String(); strings.Count(got, ";") != 4 {
		t.Errorf("buffer = %q", got)
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, "three polls", time.Second, func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("polled %d times", n)
	}
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { // Fatalf in the recorder does not stop the goroutine: WaitFor returns after it
		defer close(done)
		WaitFor(r, "never", 20*time.Millisecond, func() bool { return false })
	}()
	<-done
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "timed out after 20ms waiting for never") {
		t.Errorf("failures = %q", r.errs)
	}
}

func TestGone(t *testing.T) {
	if Gone(os.Getpid()) {
		t.Error("this process is reported gone")
	}
	if !Gone(1 << 30) { // beyond any pid_max
		t.Error("an absent pid is reported running")
	}
}

func TestWantCode(t *testing.T) {
	te := toolerr.New(toolerr.Timeout, "hint", "slow")
	if got := WantCode(t, te, toolerr.Timeout); got != te {
		t.Errorf("WantCode returned %v", got)
	}
	r := &recorder{TB: t}
	_ = WantCode(r, te, toolerr.Denied)
	if !r.fatal || !strings.Contains(r.errs[0], "want code DENIED") {
		t.Errorf("failures = %q", r.errs)
	}
}
