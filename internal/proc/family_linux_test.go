//go:build linux

package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// An orphan this runtime adopted cannot be told apart between calls in
// flight: it is killed at the end of the last one (here B, which was still
// running when A ended), not while another call may own it.
func TestAdoptedOrphanDiesWithTheLastCall(t *testing.T) {
	if strings.HasPrefix(Containment(), "cgroup") {
		t.Skip("cgroups in force: the family sweep is not used")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	dir := t.TempDir()
	pidFile, release := filepath.Join(dir, "pid"), filepath.Join(dir, "release")
	// B runs until released (bounded: 30 s).
	b := script(t, "i=0; while [ ! -e \"$1\" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done\n")
	bDone := make(chan *Result, 1)
	bStarted := make(chan struct{})
	go func() {
		close(bStarted)
		res, _ := Run(context.Background(), Spec{Path: b, Args: []string{release}, Env: []string{"PATH=/usr/bin:/bin"}})
		bDone <- res
	}()
	<-bStarted
	testutil.WaitFor(t, "B in flight", 5*time.Second, func() bool {
		leadersMu.Lock() // addLeader writes under RLock
		defer leadersMu.Unlock()
		return len(leaders) == 1
	})
	// A leaves a double-forked orphan that left the session and cleared its
	// environment, then ends.
	a := script(t, "env -i PATH=/usr/bin:/bin setsid sh -c 'sh -c \"echo \\$\\$ > $0; exec sleep 1000\" & exit' \"$1\" &\n"+
		"while [ ! -s \"$1\" ]; do sleep 0.01; done\n")
	run(t, Spec{Path: a, Args: []string{pidFile}, Env: []string{"PATH=/usr/bin:/bin"}})
	pid := readPID(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if testutil.Gone(pid) {
		t.Fatal("the orphan was killed while another call was in flight")
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := <-bDone; res == nil || res.ExitCode != 0 {
		t.Fatalf("B: %+v", res)
	}
	testutil.WaitGone(t, pid)
}

// What a call left is killed as one: no process of it outlives another
// long enough to act on that death. Each writer here left the session and
// waits for its own child (sleep), writing a file the moment that child
// dies; killed one at a time, child first, the writer ran on to its write
// before its own SIGKILL came (under load: TestBackgroundWriterIsKilled).
// Several writers, so that some child comes first in any kill order.
func TestFamilyDiesAsOne(t *testing.T) {
	if strings.HasPrefix(Containment(), "cgroup") {
		t.Skip("cgroups in force: the family sweep is not used")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	dir := t.TempDir()
	const writers = 12
	s := script(t, "i=0; while [ $i -lt "+strconv.Itoa(writers)+" ]; do\n"+
		"  setsid sh -c 'sleep 1000 & echo $$ > \"$0.ready\"; wait; echo late > \"$0.late\"' \"$1/w$i\" >/dev/null 2>&1 </dev/null &\n"+
		"  i=$((i+1))\ndone\n"+
		// Exit once every writer waits for its sleep (bounded: 30 s).
		"i=0; while [ $(ls \"$1\"/*.ready 2>/dev/null | wc -l) -lt "+strconv.Itoa(writers)+" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done\n")
	run(t, Spec{Path: s, Args: []string{dir}, Env: []string{"PATH=/usr/bin:/bin"}})
	for i := range writers {
		pid := readPID(t, filepath.Join(dir, "w"+strconv.Itoa(i)+".ready"))
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
		testutil.WaitGone(t, pid) // gone, it writes nothing more: the check below is final
		if _, err := os.Stat(filepath.Join(dir, "w"+strconv.Itoa(i)+".late")); err == nil {
			t.Errorf("writer %d outlived its child and wrote", i)
		}
	}
}
