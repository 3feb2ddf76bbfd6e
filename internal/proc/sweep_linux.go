//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Without cgroups, a descendant that calls setsid leaves the call's process
// group and no signal to the group reaches it. It still carries the
// environment it inherited, and every run's environment holds a marker
// (trackVar=<runtime pid>.<run id>): sweeping /proc for processes whose
// environment carries the marker finds them. A process that rewrites its
// whole environment escapes this; cgroups do not have that hole.

// sweep SIGKILLs every process of this user whose environment carries
// marker (an exact "trackVar=..." entry, or with prefix, any entry starting
// so). It returns how many it signalled. Only pids from minPid on are
// looked at (a run's descendants were created after its leader), unless the
// pid counter wrapped since; minPid 0 looks at all.
//
// A marked process may fork while a pass runs: its child has a pid the
// pass's listing of /proc did not hold, and would outlive the parent the
// pass kills (a setsid'd writer left behind by a job under load). So the
// passes repeat until one finds nothing, a few at most: a killed process
// forks no more.
func sweep(marker []byte, prefix bool, minPid int) int {
	n := 0
	for range maxSweeps {
		k := sweepOnce(marker, prefix, minPid)
		n += k
		if k == 0 {
			break
		}
	}
	return n
}

// maxSweeps bounds the passes of one sweep.
const maxSweeps = 5

func sweepOnce(marker []byte, prefix bool, minPid int) int {
	if minPid > 0 && lastPid() < minPid {
		minPid = 0 // the pid counter wrapped around
	}
	dir, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return 0
	}
	self, uid := os.Getpid(), os.Getuid()
	var stopped []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid <= 1 || pid < minPid {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+name, &st) != nil || int(st.Uid) != uid {
			continue
		}
		env, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil {
			continue
		}
		if !carries(env, marker, prefix) {
			continue
		}
		if prefix {
			// SweepAll takes orphans only: a process whose parent is this
			// runtime, or another marked process, still belongs to a live
			// provider or call (of another runtime in this process, as in
			// tests); orphans were re-parented to init or a subreaper.
			// As a subreaper this process is also the parent of orphans
			// it adopted: a direct child is one in our session that leads
			// its own group (an upstream) or is in ours.
			if pp := ppid(name); pp == self && directChild(name) || pp > 1 && pp != self && marked(pp, marker) {
				continue
			}
		}
		// Stopped now, killed once the pass is over: killed one at a time,
		// a process outlives another of its kind long enough to act on its
		// death (see stopThenKill); stopped, it cannot exit either, so its
		// pid is not reused before the SIGKILL.
		if syscall.Kill(pid, syscall.SIGSTOP) == nil {
			stopped = append(stopped, pid)
		}
	}
	n := 0
	for _, pid := range stopped {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

func carries(env, marker []byte, prefix bool) bool {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, marker) || prefix && bytes.HasPrefix(kv, marker) {
			return true
		}
	}
	return false
}

func marked(pid int, marker []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && carries(env, marker, true)
}

// ppid reads the parent pid from /proc/<pid>/stat ("pid (comm) S ppid ...").
func ppid(pid string) int {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(string(f[1]))
	return n
}

// lastPid is the most recently created pid (/proc/loadavg), or MaxInt.
func lastPid() int {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return int(^uint(0) >> 1)
	}
	f := bytes.Fields(b)
	if len(f) < 5 {
		return int(^uint(0) >> 1)
	}
	n, err := strconv.Atoi(string(f[4]))
	if err != nil {
		return int(^uint(0) >> 1)
	}
	return n
}

// SweepAll kills every orphaned process that a run (or an MCP upstream) of
// this runtime started and that is still alive, however it detached itself
// (unless it rewrote its environment). Call it when the runtime exits, after
// closing its providers, so that no child survives it.
func SweepAll() int {
	return sweep([]byte(trackVar+"="+strconv.Itoa(os.Getpid())+"."), true, 0) + sweepAdopted()
}

// directChild tells a child this process started from an orphan it
// adopted as subreaper.
func directChild(pid string) bool {
	st, ok := readStat(pid)
	if !ok {
		return true // gone or unreadable: leave it
	}
	n, _ := strconv.Atoi(pid)
	leadersAddMu.Lock() // runs register under leadersMu.RLock plus this
	running := leaders[n]
	leadersAddMu.Unlock()
	if running {
		// A run in flight leads a session of its own: it belongs to its
		// call (of another runtime in this process, an embedder's or a
		// test's), which ends it itself.
		return true
	}
	sid, _ := unix.Getsid(0)
	return st.sid == sid && (st.pgid == n || st.pgid == syscall.Getpgrp())
}
