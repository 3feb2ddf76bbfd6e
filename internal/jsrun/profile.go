package jsrun

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// ProfileEnv, set in the server's environment to a directory, makes each
// script's process write a CPU profile of its script there
// (jsrun-<pid>.pprof, sampled at profileHz; the profiles merge:
// `go tool pprof -top DIR/*.pprof`). It measures the child's side of a
// script (docs/measured.md); the child's environment holds this one
// variable then, nothing else. The profile is written before the answer,
// so a profiled script is slower by the writing.
const ProfileEnv = "AGENT_TOOLS_JSRUN_CPUPROFILE"

// profileHz is the profiled child's sampling rate: a script takes a
// millisecond or two of processor time, which at the default 100 Hz would
// leave its profile empty.
const profileHz = 10000

// childEnv is a script's process's environment: empty, or the profile
// directory when the server was asked for profiles.
func childEnv() []string {
	if dir := os.Getenv(ProfileEnv); dir != "" {
		return []string{ProfileEnv + "=" + dir}
	}
	return []string{}
}

// childProfile opens the child's profile when asked for one (before the
// descriptor limit); start begins sampling and stop writes the profile.
// Without ProfileEnv both do nothing.
func childProfile() (start, stop func()) {
	nothing := func() {}
	dir := os.Getenv(ProfileEnv)
	if dir == "" {
		return nothing, nothing
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("jsrun-%d.pprof", os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsrun child: profile:", err)
		return nothing, nothing
	}
	start = func() {
		// StartCPUProfile asks for 100 Hz and, the rate being set, keeps
		// this one (it says so on stderr).
		runtime.SetCPUProfileRate(profileHz)
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "jsrun child: profile:", err)
		}
	}
	stop = func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
	return start, stop
}
