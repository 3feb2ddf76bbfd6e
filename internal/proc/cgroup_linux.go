//go:build linux

package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupRoot is where the unified (v2) hierarchy is mounted.
const cgroupRoot = "/sys/fs/cgroup"

const cgroup2Magic = unix.CGROUP2_SUPER_MAGIC

// cgroupBase is the delegated cgroup v2 directory under which each run gets
// its own child cgroup, or "" with the reason it cannot be used. It is probed
// once: a real mkdir/rmdir of a child cgroup, so "delegated" means "this
// process may create cgroups here", not merely "the files look writable".
var cgroupBase = sync.OnceValues(probeCgroup)

var cgroupSeq atomic.Uint64

func probeCgroup() (dir, reason string) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(cgroupRoot, &st); err != nil {
		return "", "no cgroup filesystem at " + cgroupRoot
	}
	if st.Type != cgroup2Magic {
		return "", cgroupRoot + " is not cgroup v2 (legacy or hybrid hierarchy)"
	}
	self, err := ownCgroup()
	if err != nil {
		return "", err.Error()
	}
	dir = filepath.Join(cgroupRoot, self)
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		return "", "the kernel has no cgroup.kill (needs Linux 5.14)"
	}
	probe := filepath.Join(dir, fmt.Sprintf("agent-tools-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return "", "cgroup " + dir + " is not delegated to this process (" + errors.Unwrap(err).Error() + ")"
	}
	_ = os.Remove(probe)
	return dir, ""
}

// ownCgroup reads this process's cgroup v2 path from /proc/self/cgroup.
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("cannot read /proc/self/cgroup: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2")
}

// Containment says how Run contains the processes of a call, for doctor:
// "cgroup v2 (<dir>)" when every run gets its own cgroup that is killed as
// a whole, otherwise "process group and session" with the reason cgroups
// are not used and what is then not guaranteed.
func Containment() string {
	dir, reason := cgroupBase()
	if dir != "" {
		return "cgroup v2 (" + dir + ")"
	}
	if !subreaper() {
		return "process group and session: " + reason +
			"; descendants are also found by the run marker and the process tree. Not guaranteed: " +
			"a double fork that leaves the session and clears its environment outlives its call (this kernel refused PR_SET_CHILD_SUBREAPER)"
	}
	return "process group and session: " + reason +
		"; descendants are also found by the run marker, the process tree and, as child subreaper, the orphans re-parented to this process. " +
		"Not guaranteed: an orphan that left the session and cleared its environment lives on while another call runs (until the last one ends, or serve exits)"
}

// cgroup is one run's own cgroup.
type cgroup struct {
	dir string
	fd  int // O_PATH fd of dir, for clone3(CLONE_INTO_CGROUP)
}

// newCgroup creates a fresh child cgroup, or returns nil when cgroups are not
// in force (the caller then relies on the process group alone).
func newCgroup() *cgroup {
	base, _ := cgroupBase()
	if base == "" {
		return nil
	}
	dir := filepath.Join(base, "agent-tools-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(cgroupSeq.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	fd, err := syscall.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

func (c *cgroup) apply(attr *syscall.SysProcAttr) {
	if c == nil {
		return
	}
	attr.UseCgroupFD = true
	attr.CgroupFD = c.fd
}

// release kills every process left in the cgroup (however far it detached
// itself) and removes the cgroup once it is empty.
func (c *cgroup) release() {
	if c == nil {
		return
	}
	_ = syscall.Close(c.fd)
	_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	// The kill is asynchronous: rmdir fails with EBUSY until the last
	// process is gone. Bounded retries; a leftover empty directory is harmless.
	for i := range 200 {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(time.Duration(min(i+1, 10)) * time.Millisecond)
	}
}
