//go:build linux

package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
