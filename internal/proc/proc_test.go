//go:build unix

package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
	"golang.org/x/sys/unix"
)

// script writes an executable /bin/sh script into a temp dir and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, s Spec) *Result {
	t.Helper()
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid
}

func TestExitCodes(t *testing.T) {
	for _, code := range []int{0, 1, 3, 127} {
		res := run(t, Spec{Path: script(t, "exit "+strconv.Itoa(code)+"\n")})
		if res.ExitCode != code || res.Signal != 0 || res.TimedOut || res.Cancelled {
			t.Errorf("exit %d: got %+v", code, res)
		}
	}
	res := run(t, Spec{Path: script(t, "kill -KILL $$\n")})
	if res.ExitCode != -1 || res.Signal != syscall.SIGKILL {
		t.Errorf("killed by signal: got exit %d signal %v", res.ExitCode, res.Signal)
	}
}

func TestArgsAreLiteral(t *testing.T) {
	args := []string{"a b", "$HOME", "`id`", "; rm -rf /", "*", ""}
	res := run(t, Spec{Path: script(t, `for a in "$@"; do printf '[%s]\n' "$a"; done`+"\n"), Args: args})
	want := "[a b]\n[$HOME]\n[`id`]\n[; rm -rf /]\n[*]\n[]\n"
	if got := string(res.Stdout); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStdin(t *testing.T) {
	cat := script(t, "exec cat\n")
	res := run(t, Spec{Path: cat, Stdin: []byte(`{"a":1}`)})
	if string(res.Stdout) != `{"a":1}` {
		t.Errorf("got %q", res.Stdout)
	}
	// Larger than a pipe buffer, so the writer really has to wait for the reader.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	res = run(t, Spec{Path: cat, Stdin: big})
	if !bytes.Equal(res.Stdout, big) {
		t.Errorf("big stdin: got %d bytes, want %d", len(res.Stdout), len(big))
	}
	// nil Stdin is /dev/null: cat ends at once.
	res = run(t, Spec{Path: cat})
	if len(res.Stdout) != 0 || res.ExitCode != 0 {
		t.Errorf("nil stdin: %+v", res)
	}
	// A child that never reads a large stdin must not hang Run.
	res = run(t, Spec{Path: script(t, "exit 0\n"), Stdin: big})
	if res.ExitCode != 0 {
		t.Errorf("unread stdin: %+v", res)
	}
}

func TestEnvIsExact(t *testing.T) {
	marker := regexp.MustCompile(`^AGENTTOOLS_RUN=` + strconv.Itoa(os.Getpid()) + `\.[0-9]+$`)
	res := run(t, Spec{Path: "/usr/bin/env", Env: []string{"A=1", "B=x y", "EMPTY="}})
	lines := strings.Split(strings.TrimSuffix(string(res.Stdout), "\n"), "\n")
	if len(lines) != 4 || strings.Join(lines[:3], "\n") != "A=1\nB=x y\nEMPTY=" || !marker.MatchString(lines[3]) {
		t.Errorf("got %q, want A, B, EMPTY and the run marker", res.Stdout)
	}
	res = run(t, Spec{Path: "/usr/bin/env", Dir: t.TempDir()})
	if !marker.MatchString(strings.TrimSpace(string(res.Stdout))) {
		t.Errorf("nil Env must hold only the run marker (no inheritance, no PWD): got %q", res.Stdout)
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	res := run(t, Spec{Path: "/bin/pwd", Args: []string{"-P"}, Dir: dir})
	want, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(string(res.Stdout)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPathLookupUsesChildPATH(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mytool"), []byte("#!/bin/sh\necho found\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(t, Spec{Path: "mytool", Env: []string{"PATH=relative:" + dir}})
	if string(res.Stdout) != "found\n" {
		t.Errorf("got %q", res.Stdout)
	}
	_, err := Run(context.Background(), Spec{Path: "mytool", Env: []string{"PATH=/nonexistent"}})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("want ErrNotFound, got %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: "/nonexistent/tool"})
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/nonexistent/tool") {
		t.Errorf("not found: got %v", err)
	}
	p := filepath.Join(t.TempDir(), "noexec")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Spec{Path: p})
	if err == nil || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), p) {
		t.Errorf("not executable: got %v", err)
	}
	_, err = Run(context.Background(), Spec{Path: "/bin/true", Dir: "/nonexistent-dir"})
	if err == nil {
		t.Error("bad Dir: want an error")
	}
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := script(t, "sleep 1000 &\necho $! > \"$1\"\necho started\nwait\n")
	start := time.Now()
	res := run(t, Spec{Path: s, Args: []string{pidFile}, Timeout: 300 * time.Millisecond, Grace: time.Second})
	if !res.TimedOut || res.Cancelled {
		t.Fatalf("want TimedOut: %+v", res)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Run took %v: the grandchild holding the pipes must not hang it", el)
	}
	if string(res.Stdout) != "started\n" {
		t.Errorf("partial output lost: %q", res.Stdout)
	}
	if res.Signal != syscall.SIGTERM {
		t.Errorf("leader should have died of SIGTERM, got %v (exit %d)", res.Signal, res.ExitCode)
	}
	testutil.WaitGone(t, readPID(t, pidFile))
}

func TestSIGTERMIgnoredGetsSIGKILL(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := script(t, "trap '' TERM\nsleep 1000 &\necho $! > \"$1\"\nwait\n")
	grace := 300 * time.Millisecond
	start := time.Now()
	res := run(t, Spec{Path: s, Args: []string{pidFile}, Timeout: 200 * time.Millisecond, Grace: grace})
	el := time.Since(start)
	if !res.TimedOut || res.Signal != syscall.SIGKILL || res.ExitCode != -1 {
		t.Fatalf("want TimedOut + SIGKILL: %+v", res)
	}
	if el < 500*time.Millisecond || el > 3*time.Second {
		t.Errorf("took %v, want about timeout+grace", el)
	}
	testutil.WaitGone(t, readPID(t, pidFile))
}

func TestGraceSparedWhenGroupExitsOnSIGTERM(t *testing.T) {
	s := script(t, "sleep 1000\n")
	start := time.Now()
	res := run(t, Spec{Path: s, Timeout: 100 * time.Millisecond, Grace: 4 * time.Second})
	if !res.TimedOut {
		t.Fatalf("want TimedOut: %+v", res)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v: a group that dies on SIGTERM must not wait for the grace period", el)
	}
}

func TestGroupKilledWhenLeaderExitsOnSIGTERM(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := script(t, "(trap '' TERM; sleep 1000) &\necho $! > \"$1\"\nwait\n")
	start := time.Now()
	res := run(t, Spec{Path: s, Args: []string{pidFile}, Timeout: 200 * time.Millisecond, Grace: 4 * time.Second})
	if !res.TimedOut || res.Signal != syscall.SIGTERM {
		t.Fatalf("want TimedOut, leader dead of SIGTERM: %+v", res)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v: the leader's exit ends the grace period", el)
	}
	testutil.WaitGone(t, readPID(t, pidFile))
}

func TestLeftoverChildIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := script(t, "sleep 1000 &\necho $! > \"$1\"\necho done\n")
	start := time.Now()
	res := run(t, Spec{Path: s, Args: []string{pidFile}})
	pid := readPID(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if res.ExitCode != 0 || string(res.Stdout) != "done\n" || res.TimedOut || res.OutputIncomplete {
		t.Errorf("got %+v stdout %q", res, res.Stdout)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
	testutil.WaitGone(t, pid) // the background job of the script's own group ends with the call
}

// A descendant that leaves the process group (setsid) keeps the pipe open.
// Run must not hang and must deliver everything written so far. The
// descendant is killed (found by its cgroup, else by the run marker in its
// environment); one that also cleared its environment escapes without a
// cgroup, and then the output is marked incomplete.
func TestEscapedChild(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	cgroups := strings.HasPrefix(Containment(), "cgroup")
	linux := runtime.GOOS == "linux" // the marker, the session, the tree and adopted orphans
	cases := []struct {
		name, launcher string
		killed         bool
	}{
		{"setsid", "setsid", cgroups || linux},
		{"setsid with a cleared environment", "env -i PATH=/usr/bin:/bin setsid", cgroups || linux},
		// A double fork: the middle process exits at once, so the child
		// has no parent in the call when the call ends.
		{"double fork, setsid, cleared environment", "env -i PATH=/usr/bin:/bin setsid sh -c '\"$0\" \"$@\" & exit' ", cgroups || linux},
		{"a new process group", "perl -e 'setpgrp(0,0); exec @ARGV' --", cgroups || linux},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			s := script(t, c.launcher+" sh -c 'echo $$ > \"$1\"; exec sleep 1000' sh \"$1\" &\n"+
				"while [ ! -s \"$1\" ]; do sleep 0.01; done\nhead -c 100000 /dev/zero | tr '\\0' x\necho\necho tail-line\n")
			start := time.Now()
			res := run(t, Spec{Path: s, Args: []string{pidFile}, Env: []string{"PATH=/usr/bin:/bin"}})
			pid := readPID(t, pidFile)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %v: an escaped child must not hang Run", el)
			}
			if !bytes.HasSuffix(res.Stdout, []byte("\ntail-line\n")) || len(res.Stdout) != 100000+len("\ntail-line\n") {
				t.Errorf("output written before exit was lost: %d bytes", len(res.Stdout))
			}
			if c.killed {
				testutil.WaitGone(t, pid)
				if res.OutputIncomplete {
					t.Error("the escaped child was killed: the output is complete")
				}
				return
			}
			if testutil.Gone(pid) {
				t.Fatal("expected this child to escape (no cgroup, no marker)")
			}
			if !res.OutputIncomplete {
				t.Error("a pipe still held open must mark the output incomplete")
			}
		})
	}
}

func TestSweepAll(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	// An orphan carrying this runtime's marker (as an MCP upstream's setsid
	// child does once the upstream is gone), started outside Run.
	orphan := exec.Command("/bin/sh", "-c", "setsid sleep 1000 >/dev/null 2>&1 & echo $!")
	orphan.Env = []string{"PATH=/usr/bin:/bin", TrackEnv("test")}
	out, err := orphan.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// sh has returned $! before setsid ran: until it has, the child is
	// still in this process's session, where the sweep rightly spares it.
	testutil.WaitFor(t, "the orphan leads its own session", 10*time.Second, func() bool {
		sid, err := unix.Getsid(pid)
		return err == nil && sid == pid
	})
	// A live child of this process with the marker is not an orphan: kept.
	live := exec.Command("sleep", "1000")
	live.Env = []string{"PATH=/usr/bin:/bin", TrackEnv("live")}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })
	if n := SweepAll(); n < 1 {
		t.Errorf("SweepAll killed %d processes", n)
	}
	testutil.WaitGone(t, pid)
	if testutil.Gone(live.Process.Pid) {
		t.Error("a live child of the runtime was swept")
	}
}

// Output written just before exit is never lost, however loaded the machine
// (the original defect: 6 of 1,000 concurrent calls came back empty).
func TestConcurrentRunsDeliverEveryOutput(t *testing.T) {
	s := script(t, "echo probe-ok-$$\n")
	const n = 64
	errs := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			res, err := Run(context.Background(), Spec{Path: s})
			switch {
			case err != nil:
				errs <- err.Error()
			case !strings.HasPrefix(string(res.Stdout), "probe-ok-") || res.OutputIncomplete || res.ExitCode != 0:
				errs <- fmt.Sprintf("stdout %q incomplete=%v exit=%d", res.Stdout, res.OutputIncomplete, res.ExitCode)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestContainmentIsStated(t *testing.T) {
	c := Containment()
	if !strings.HasPrefix(c, "cgroup v2 (") && !(strings.HasPrefix(c, "process group and session") && strings.Contains(c, "Not guaranteed: ")) {
		t.Errorf("Containment() = %q", c)
	}
}

func TestOutputFloodIsBounded(t *testing.T) {
	const total = 50 << 20
	res := run(t, Spec{Path: script(t, "yes | head -c 50M\n")})
	if len(res.Stdout) != DefaultMaxOutput || res.StdoutTruncated != total-DefaultMaxOutput {
		t.Errorf("kept %d dropped %d", len(res.Stdout), res.StdoutTruncated)
	}
	if res.ExitCode != 0 {
		t.Errorf("exit %d: the child must not block or die on a full pipe", res.ExitCode)
	}
	res = run(t, Spec{Path: script(t, "yes | head -c 1M >&2\necho ok\n"), MaxOutput: 1000})
	if len(res.Stderr) != 1000 || res.StderrTruncated != 1<<20-1000 || string(res.Stdout) != "ok\n" || res.StdoutTruncated != 0 {
		t.Errorf("stderr: kept %d dropped %d, stdout %q", len(res.Stderr), res.StderrTruncated, res.Stdout)
	}
	if !bytes.HasPrefix(res.Stderr, []byte("y\ny\n")) {
		t.Errorf("the head must be kept: %q", res.Stderr[:10])
	}
}

func TestContextCancel(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	s := script(t, "touch \""+ready+"\"\nsleep 1000\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if _, err := os.Stat(ready); err == nil {
				cancel()
				return
			}
		}
	}()
	start := time.Now()
	res, err := Run(ctx, Spec{Path: s, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut || res.Signal != syscall.SIGTERM {
		t.Errorf("want Cancelled: %+v", res)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v", el)
	}

	// Already done: nothing is started.
	res, err = Run(ctx, Spec{Path: "/nonexistent"})
	if err != nil || !res.Cancelled || res.ExitCode != -1 {
		t.Errorf("done ctx: %+v, %v", res, err)
	}
}

func TestContextDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Spec{Path: script(t, "sleep 1000\n")})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("want Cancelled by ctx deadline: %+v", res)
	}
}

func TestText(t *testing.T) {
	cases := map[string]string{
		"plain":            "plain",
		"héllo ✓":          "héllo ✓",
		"bad\xffbyte":      "bad\uFFFDbyte",
		"cut \xe2\x9c":     "cut \uFFFD",
		"":                 "",
		"nul\x00kept":      "nul\x00kept",
		"\xc3\x28 invalid": "\uFFFD( invalid",
	}
	for in, want := range cases {
		if got := Text([]byte(in)); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCaptureKeepsHead(t *testing.T) {
	c := &capture{max: 5}
	for _, s := range []string{"ab", "cdef", "gh"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if string(c.buf) != "abcde" || c.dropped != 3 {
		t.Errorf("buf %q dropped %d", c.buf, c.dropped)
	}
}

// A run whose pipe was still held open is never a clean success.
func TestShapeMarksIncompleteOutput(t *testing.T) {
	out, err := Shape(context.Background(), &Result{Stdout: []byte("partial"), OutputIncomplete: true}, Subject{What: `local tool "x"`})
	if err != nil || !out.IsError || out.Details["output_incomplete"] != true || !strings.HasPrefix(out.Text, "partial\n[output incomplete") {
		t.Fatalf("got %+v, %v", out, err)
	}
	out, _ = Shape(context.Background(), &Result{Stdout: []byte("all")}, Subject{What: "x"})
	if out.IsError || out.Details["output_incomplete"] != nil {
		t.Errorf("complete output marked: %+v", out)
	}
}

func BenchmarkSweep(b *testing.B) {
	for b.Loop() {
		sweep([]byte("AGENTTOOLS_RUN=none"), false, os.Getpid())
	}
}

func TestOnStdoutSeesEverything(t *testing.T) {
	var mu sync.Mutex
	var seen []byte
	res, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "printf 'one\\ntwo\\n'; printf 'three'"},
		Env: []string{"PATH=/usr/bin:/bin"}, MaxOutput: 4,
		OnStdout: func(b []byte) { mu.Lock(); seen = append(seen, b...); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if string(seen) != "one\ntwo\nthree" || string(res.Stdout) != "one\n" {
		t.Errorf("tee saw %q, kept %q: the tee sees all of stdout, the cap applies to what is kept", seen, res.Stdout)
	}
}

// A call in flight leads a session of its own; another runtime of this
// process ending (an embedder's, or a parallel test's CLI command) sweeps
// its orphans but must leave that call alone.
func TestSweepAllSparesRunsInFlight(t *testing.T) {
	dir := t.TempDir()
	started, resume := filepath.Join(dir, "started"), filepath.Join(dir, "resume")
	for _, f := range []string{started, resume} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skip("no mkfifo: ", err)
		}
	}
	// Opening a FIFO blocks until the other end opens: the two are the
	// signals "the call runs" and "go on".
	s := script(t, "echo up > "+started+"\nread line < "+resume+"\necho survived-$line\n")
	done := make(chan *Result, 1)
	go func() {
		res, err := Run(context.Background(), Spec{Path: s, Timeout: time.Minute})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	if _, err := os.ReadFile(started); err != nil {
		t.Fatal(err)
	}
	SweepAll()
	// A swept script never reads: the write then blocks, and the result
	// (killed) says so first; the cleanup opens a reader to release it.
	go func() { _ = os.WriteFile(resume, []byte("yes\n"), 0o600) }()
	t.Cleanup(func() {
		if f, err := os.OpenFile(resume, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	res := <-done
	if res == nil || !strings.Contains(string(res.Stdout), "survived-yes") || res.Signal != 0 {
		t.Fatalf("the call in flight was swept: %+v", res)
	}
}
