//go:build !linux

package regserver

import "os/exec"

// dieWithParent: only Linux has a parent-death signal; elsewhere the
// tests' cleanup stops the servers.
func dieWithParent(*exec.Cmd) {}
