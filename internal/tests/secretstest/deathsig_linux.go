package secretstest

import (
	"os/exec"
	"syscall"
)

// dieWithUs ends c when the test process ends, even by a crash or a
// timeout that skips Stop.
func dieWithUs(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
