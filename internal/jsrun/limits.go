package jsrun

import (
	"runtime"
	"strings"
)

// A ProcessLimit is one bound on a script's process, as doctor shows it.
type ProcessLimit struct {
	// Setting is the configuration key the bound enforces (code.memory,
	// code.cpu, code.timeout), or what else the process is held to.
	Setting string `json:"setting"`
	// How is how this system enforces it, or why it cannot.
	How string `json:"how"`
	// InForce is false where this system cannot set the bound.
	InForce bool `json:"inForce"`
}

// ProcessLimits are the bounds a script gets here: this system's, or the
// in-process ones where scripts cannot run in a limited process
// ([Isolation]).
func ProcessLimits() []ProcessLimit {
	if ok, _ := Isolation(); !ok {
		return processLimits("")
	}
	return processLimits(runtime.GOOS)
}

// limitFamily groups the systems whose children get the same limits:
// "linux", "unix" (the other Unix systems), "windows", or "" where a
// script cannot run in a limited process.
func limitFamily(goos string) string {
	switch goos {
	case "linux", "android":
		return "linux"
	case "windows":
		return "windows"
	case "aix", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "netbsd", "openbsd", "solaris":
		return "unix"
	}
	return ""
}

// processLimits are the bounds a script gets on goos (limits_*.go set
// them; the test holds every system's list to its settings).
func processLimits(goos string) []ProcessLimit {
	const (
		watcher  = "a memory watcher in the process, which exits past it"
		deadline = "the server kills the process at the deadline"
	)
	switch limitFamily(goos) {
	case "linux":
		return []ProcessLimit{
			{"code.memory", watcher + ", backed by an address-space limit (RLIMIT_AS) at twice code.memory plus 128 MiB (cgroup memory.max is not used)", true},
			{"code.cpu", "RLIMIT_CPU (user and system time)", true},
			{"code.timeout", deadline, true},
			{"descriptors", "none but its pipes: inherited ones are closed, RLIMIT_NOFILE 32", true},
			{"environment", "empty", true},
		}
	case "unix":
		return []ProcessLimit{
			{"code.memory", watcher + " (no address-space backstop: it is not set on this system)", true},
			{"code.cpu", "RLIMIT_CPU (user and system time)", true},
			{"code.timeout", deadline, true},
			{"descriptors", "RLIMIT_NOFILE 32 (inherited descriptors cannot be told from the runtime's here: the server opens its own close-on-exec)", true},
			{"environment", "empty", true},
		}
	case "windows":
		return []ProcessLimit{
			{"code.memory", watcher + ", backed by its job object's commit limit (JOB_OBJECT_LIMIT_PROCESS_MEMORY) at twice code.memory plus 128 MiB", true},
			{"code.cpu", "its job object's user-mode time limit (JOB_OBJECT_LIMIT_JOB_TIME, counted from the script's start; kernel time is not counted)", true},
			{"code.timeout", deadline, true},
			{"processes", "its job object ends it with the server (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE) and admits no other process (JOB_OBJECT_LIMIT_ACTIVE_PROCESS 1)", true},
			{"environment", "empty", true},
		}
	}
	return []ProcessLimit{
		{"code.memory", "cannot be set: scripts run inside the server, bounded only by the heap sampler (512 MiB of heap growth, process-wide)", false},
		{"code.cpu", "cannot be set: scripts run inside the server (the timeout still applies)", false},
		{"code.timeout", "the interpreter's watchdog interrupts the script at the deadline", true},
	}
}

// describeLimits is doctor's line on scripts for goos.
func describeLimits(goos string) string {
	var b strings.Builder
	if limitFamily(goos) == "" {
		b.WriteString("scripts run inside the server")
	} else {
		b.WriteString("each script runs in its own process")
	}
	for _, l := range processLimits(goos) {
		b.WriteString("; " + l.Setting + ": " + l.How)
	}
	return b.String()
}
