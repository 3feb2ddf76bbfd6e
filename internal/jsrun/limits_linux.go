//go:build linux

package jsrun

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// closeInherited closes the descriptors the child inherited beyond its
// three pipes: Go opens its own with close-on-exec, but one the server
// itself inherited without it (from whatever started the server) would
// pass to every child. What the child's runtime opened is kept: its poller
// (anon_inode) and the cgroup files it reads for GOMAXPROCS.
func closeInherited() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/fs/cgroup/") || strings.HasPrefix(target, "/proc/") {
			continue // the runtime's own, or the directory being read
		}
		_ = syscall.Close(fd)
	}
}

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
