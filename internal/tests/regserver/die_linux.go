package regserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent kills cmd when the test binary ends, however it ends.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
