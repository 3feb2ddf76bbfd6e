//go:build linux

package jsrun

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// mappedBytes is this process's address space (/proc/self/statm), 0 when
// unknown.
func mappedBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pages, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// setDeathSignal kills the child if the server dies first.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

func limitKinds() string {
	return "a memory watcher of code.memory backed by an address-space limit (RLIMIT_AS), RLIMIT_CPU of code.cpu, " +
		"RLIMIT_NOFILE, an empty environment and no descriptors but its pipes; the server kills it at the deadline " +
		"(cgroup memory.max is not used)"
}
