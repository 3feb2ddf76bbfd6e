//go:build unix && !linux

package jsrun

// mappedBytes is unknown here: the address-space limit is not set (macOS
// does not enforce RLIMIT_AS), the memory watcher alone bounds the child.
func mappedBytes() int64 { return 0 }

func limitKinds() string {
	return "a memory watcher of code.memory (this system enforces no address-space limit), RLIMIT_CPU of code.cpu, " +
		"RLIMIT_NOFILE, an empty environment and no descriptors but its pipes; the server kills it at the deadline"
}

// closeInherited: without /proc the child cannot tell inherited descriptors
// from its runtime's; it relies on the server opening everything
// close-on-exec.
func closeInherited() {}
