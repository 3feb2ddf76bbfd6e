// Package proc runs a child process without a shell: an execve argument
// array, an exact environment, bounded output capture, and deadlines that kill
// the whole process group (SIGTERM, then SIGKILL after a grace period).
//
// Output is returned as raw bytes; decode it with [Text] after reassembly so
// that a multi-byte character split across reads is never mangled.
package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults applied to zero fields of [Spec].
const (
	DefaultGrace     = 2 * time.Second
	DefaultMaxOutput = 8 << 20 // 8 MiB per stream
)

// pipeWaitDelay bounds how long Run waits for EOF on stdout/stderr once the
// call's processes are gone: only a descendant that escaped the process group
// (setsid, without cgroups) can still hold a pipe then. Whatever the pipe holds
// is still read; what that descendant writes later is not, and the Result says
// so (OutputIncomplete).
const pipeWaitDelay = time.Second

// trackVar marks the environment of every run and its descendants.
const trackVar = "AGENTTOOLS_RUN"

// TrackEnv is the environment entry that marks a process this runtime starts
// outside Run (an MCP stdio upstream) as its own, so that SweepAll also finds
// the descendants it detached (setsid) when the runtime exits.
func TrackEnv(tag string) string {
	return trackVar + "=" + strconv.Itoa(os.Getpid()) + "." + tag
}

// Spec describes one process run.
type Spec struct {
	// Path is the executable, run with execve (never through a shell). A name
	// without a slash is looked up in the PATH of Env (not of this process);
	// a relative path with a slash is relative to Dir.
	Path string
	// Args are the arguments after argv[0] (argv[0] is Path).
	Args []string
	// Dir is the working directory ("" = this process's).
	Dir string
	// Env is the exact environment of the child, plus one entry Run adds:
	// AGENTTOOLS_RUN=<runtime pid>.<run id>, by which descendants that
	// escaped the process group are found and killed (see SweepAll). A nil
	// Env is otherwise empty, not inherited: the caller decides inheritance.
	Env []string
	// Stdin is written to the child's standard input, followed by EOF
	// (nil = /dev/null).
	Stdin []byte
	// Timeout is the deadline for the whole run (0 = none; ctx still applies).
	Timeout time.Duration
	// Grace is the longest time between SIGTERM and SIGKILL to the process
	// group; the SIGKILL comes earlier if the leader exits first
	// (0 = DefaultGrace; negative = SIGKILL at once).
	Grace time.Duration
	// MaxOutput is the number of bytes kept per stream (<= 0 = DefaultMaxOutput).
	// The head is kept; the rest is drained and counted so the child never blocks.
	MaxOutput int
	// OnStdout, when set, sees stdout as it arrives, chunk by chunk and
	// before the MaxOutput cap (a worker's event stream, for real progress).
	// It runs on the reading goroutine: keep it fast, and do not retain chunk.
	OnStdout func(chunk []byte)
}

// Result is the outcome of a process that started.
type Result struct {
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated count the bytes dropped past MaxOutput.
	StdoutTruncated, StderrTruncated int64
	// ExitCode is the exit status, or -1 when the process was ended by a signal
	// (or never started because ctx was already done).
	ExitCode int
	// Signal is the signal that ended the process, 0 if it exited by itself.
	Signal syscall.Signal
	// TimedOut reports that Spec.Timeout expired and the group was killed.
	TimedOut bool
	// Cancelled reports that ctx was done before the process exited and the
	// group was killed (ctx.Err() tells a deadline from a cancellation).
	Cancelled bool
	// OutputIncomplete reports that Run stopped reading stdout or stderr
	// before EOF because a process outside the call's containment still held
	// the pipe: the output may lack what it wrote later. Callers must not
	// report such a run as a clean success.
	OutputIncomplete bool
	// Duration is the wall time from start to the end of output collection.
	Duration time.Duration
}

// Text decodes raw output as UTF-8, replacing each invalid sequence with
// U+FFFD. Use it on fully reassembled output only.
func Text(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// capture is an io.Writer that keeps the first max bytes and counts the rest.
// It never fails, so the copying goroutine keeps draining the pipe.
type capture struct {
	buf     []byte
	max     int
	dropped int64
	tee     func([]byte) // Spec.OnStdout
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if c.tee != nil {
		c.tee(p)
	}
	if room := c.max - len(c.buf); room > 0 {
		k := min(room, len(p))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
	}
	c.dropped += int64(len(p))
	return n, nil
}

func (s Spec) withDefaults() Spec {
	if s.Grace == 0 {
		s.Grace = DefaultGrace
	} else if s.Grace < 0 {
		s.Grace = 0
	}
	if s.MaxOutput <= 0 {
		s.MaxOutput = DefaultMaxOutput
	}
	return s
}
