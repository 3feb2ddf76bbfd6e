//go:build linux

package mcp

import (
	"os/exec"
	"syscall"
	"unsafe"
)

const pPID = 1 // idtype_t P_PID

// waitLeader blocks until the process has exited, without reaping it (the
// caller kills its group, then calls cmd.Wait). It reports whether it reaped.
func waitLeader(cmd *exec.Cmd) (reaped bool) {
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(cmd.Process.Pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch e {
		case 0:
			return false
		case syscall.EINTR:
			continue
		default: // waitid unusable: reap here
			_ = cmd.Wait()
			return true
		}
	}
}
