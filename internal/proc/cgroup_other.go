//go:build unix && !linux

package proc

import "syscall"

// Containment says how Run contains the processes of a call, for doctor.
func Containment() string {
	return "process group and session (cgroups and /proc are Linux-only). Not guaranteed: descendants that leave the session (setsid) or the process group can outlive a call"
}

type cgroup struct{}

func newCgroup() *cgroup                     { return nil }
func (c *cgroup) apply(*syscall.SysProcAttr) {}
func (c *cgroup) release()                   {}
