//go:build unix && !linux

package jsrun

// mappedBytes is unknown here: the address-space limit is not set (macOS
// does not enforce RLIMIT_AS), the memory watcher alone bounds the child.
func mappedBytes() int64 { return 0 }

// closeInherited: without /proc the child cannot tell inherited descriptors
// from its runtime's; it relies on the server opening everything
// close-on-exec.
func closeInherited() {}
