//go:build !linux

package secretstest

import "os/exec"

// dieWithUs: the keyring daemons run on Linux only.
func dieWithUs(*exec.Cmd) {}
