//go:build unix && !linux

package proc

import "os/exec"

// waiter: without waitid(WNOWAIT) the leader is reaped as it exits, so the
// final SIGKILL sweep of the group has a (tiny) pid-reuse window.
type waiter struct {
	exited <-chan struct{}
	finish func() error
}

func newWaiter(cmd *exec.Cmd) waiter {
	ch := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		close(ch)
	}()
	return waiter{exited: ch, finish: func() error { <-ch; return err }}
}
