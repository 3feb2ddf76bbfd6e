//go:build unix && !linux

package proc

import "syscall"

// Containment says how Run contains the processes of a call, for doctor.
func Containment() string {
	return "process group only (cgroups are Linux-only); descendants that leave the process group (setsid) can outlive a call"
}

type cgroup struct{}

func newCgroup() *cgroup                     { return nil }
func (c *cgroup) apply(*syscall.SysProcAttr) {}
func (c *cgroup) release()                   {}
