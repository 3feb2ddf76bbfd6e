//go:build linux

package proc

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Without cgroups, what a call started is found at its end by four links
// (so that no process a call started outlives it): the process group and the session of its leader (the
// leader runs in a session of its own, so a descendant that only changes
// its group is still found), the run marker in the environment, and the
// parent-child tree from /proc. A double fork that leaves the session and
// clears its environment cuts all four once its parent exits; to keep that
// last link the runtime is a child subreaper (PR_SET_CHILD_SUBREAPER):
// such orphans are re-parented to it rather than to init, and a child of
// this process in a session that is not ours, which is not a run's leader
// and carries no marker of this runtime, can only be one of them.

// subreaper makes this process adopt the orphans of its descendants,
// once; false when the kernel refused.
var subreaper = sync.OnceValue(func() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
})

// pstat is what /proc/<pid>/stat says of a process.
type pstat struct {
	ppid, pgid, sid int
	zombie          bool
}

func readStat(pid string) (pstat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return pstat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return pstat{}, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp session ...
	if len(f) < 4 {
		return pstat{}, false
	}
	var st pstat
	st.zombie = len(f[0]) == 1 && (f[0][0] == 'Z' || f[0][0] == 'X')
	st.ppid, _ = strconv.Atoi(string(f[1]))
	st.pgid, _ = strconv.Atoi(string(f[2]))
	st.sid, _ = strconv.Atoi(string(f[3]))
	return st, true
}

// processes is this user's processes but this one, by pid.
func processes() map[int]pstat {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil
	}
	self, uid := os.Getpid(), os.Getuid()
	out := make(map[int]pstat, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || pid <= 1 {
			continue
		}
		var fs syscall.Stat_t
		if syscall.Stat("/proc/"+name, &fs) != nil || int(fs.Uid) != uid {
			continue
		}
		if st, ok := readStat(name); ok {
			out[pid] = st
		}
	}
	return out
}

// adopted reports whether st (pid) is an orphan this runtime adopted as
// subreaper: a live child of ours outside our session that no run leads
// and that carries no marker of this runtime (an MCP upstream that made
// itself a session leader keeps its marker). Call under leadersMu.
func adopted(pid int, st pstat, self, ourSid int) bool {
	if st.ppid != self || st.sid == ourSid || st.zombie || leaders[pid] {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && !carries(env, []byte(trackVar+"="+strconv.Itoa(self)+"."), true)
}

// sweepFamily SIGKILLs what belongs to the run led by leader beyond its
// process group (which the caller signals itself): processes in its
// session, carrying its marker, descending from any of those or from the
// leader, and, when no other run is in flight to claim them, the orphans
// this runtime adopted. It reaps the adopted ones it kills (its own
// children) and returns how many it signalled.
func sweepFamily(leader int, marker []byte) int {
	self := os.Getpid()
	ourSid, _ := unix.Getsid(0)
	leadersMu.Lock()
	table := processes()
	alone := len(leaders) <= 1
	in := map[int]bool{leader: true}
	var own []int // adopted: ours to reap
	for pid, st := range table {
		if st.ppid == self && st.sid != ourSid && !leaders[pid] {
			// A child of ours by adoption (outside our session, leading
			// no run): reaped once it dies, else it stays our zombie.
			if st.zombie {
				own = append(own, pid)
				continue
			}
		}
		switch {
		case st.pgid == leader || st.sid == leader:
			in[pid] = true
		case alone && adopted(pid, st, self, ourSid):
			in[pid] = true
			own = append(own, pid)
		default:
			if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil && carries(env, marker, false) {
				in[pid] = true
			}
		}
	}
	leadersMu.Unlock()
	for grown := true; grown; { // descendants, through living parents
		grown = false
		for pid, st := range table {
			if !in[pid] && in[st.ppid] {
				in[pid], grown = true, true
			}
		}
	}
	var kill []int
	for pid := range in {
		st, ok := table[pid]
		if pid == leader || !ok {
			continue
		}
		if st.ppid == self && st.sid != ourSid && !slices.Contains(own, pid) {
			own = append(own, pid) // adopted, and killed here or by the caller's group kill
		}
		if st.pgid == leader && st.sid == leader {
			continue // its group: the caller's to signal
		}
		kill = append(kill, pid)
	}
	n := stopThenKill(kill, func(pid int) int { return table[pid].ppid })
	reap(own)
	return n
}

// stopThenKill SIGKILLs pids as one: it stops them all first, each parent
// before its children, then kills them. Killed one at a time, a process
// whose child died first runs on until its own SIGKILL arrives, and under
// load that is long enough to act on the death: a shell waiting for
// `sleep 1` goes on to its next command (the late write of a job's
// setsid'd writer, seen by TestBackgroundWriterIsKilled). A stopped process
// runs nothing more, and SIGKILL ends it stopped. Parents first, because
// only a parent hears of a child's stop. It returns how many it killed.
func stopThenKill(pids []int, parent func(int) int) int {
	set := make(map[int]bool, len(pids))
	for _, pid := range pids {
		set[pid] = true
	}
	depth := func(pid int) int {
		d := 0
		for p := parent(pid); set[p] && d < len(pids); p = parent(p) { // bounded: a pid table read over time may loop
			d++
		}
		return d
	}
	order := slices.Clone(pids)
	slices.SortStableFunc(order, func(a, b int) int { return depth(a) - depth(b) })
	for _, pid := range order {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	n := 0
	for _, pid := range order {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// reap waits for children this process adopted as subreaper, dead or
// killed (in the background: SIGKILL is prompt, not synchronous): else each
// stays a zombie of the runtime. Never a run's leader (registered until
// reaped) nor a child started with os/exec (in our session), whose Wait
// would lose its status; only an exec'd child that made itself a session
// leader could be mistaken, and then only its exit status is lost.
func reap(pids []int) {
	for _, pid := range pids {
		go func() {
			var ws syscall.WaitStatus
			for {
				if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
					return
				}
			}
		}()
	}
}

// sweepAdopted SIGKILLs and reaps every orphan this runtime adopted (for
// SweepAll, when the runtime exits).
func sweepAdopted() int {
	self := os.Getpid()
	ourSid, _ := unix.Getsid(0)
	leadersMu.Lock()
	var own []int
	for pid, st := range processes() {
		switch {
		case st.ppid == self && st.sid != ourSid && st.zombie && !leaders[pid]:
			own = append(own, pid)
		case adopted(pid, st, self, ourSid) && syscall.Kill(pid, syscall.SIGKILL) == nil:
			own = append(own, pid)
		}
	}
	leadersMu.Unlock()
	reap(own)
	return len(own)
}
