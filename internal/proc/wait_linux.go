//go:build linux

package proc

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// waiter tells when the leader has exited without reaping it, so that the
// process group id stays reserved until the final SIGKILL sweep is sent.
type waiter struct {
	exited <-chan struct{}
	finish func() error // reaps and collects output; call after exited
}

const pPID = 1 // idtype_t P_PID

func newWaiter(cmd *exec.Cmd) waiter {
	pid := cmd.Process.Pid
	ch := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		var info [128]byte // siginfo_t
		for {
			_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
				uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
			if e == syscall.EINTR {
				continue
			}
			if e != 0 {
				// waitid unusable (e.g. ENOSYS): fall back to reaping here.
				done <- cmd.Wait()
			}
			break
		}
		close(ch)
	}()
	return waiter{exited: ch, finish: func() error {
		select {
		case err := <-done:
			return err
		default:
			return cmd.Wait()
		}
	}}
}
