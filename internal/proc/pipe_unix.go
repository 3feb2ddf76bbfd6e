//go:build unix

package proc

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// maxFinalReads bounds the last non-blocking sweep of a pipe (×32 KiB), so a
// writer that never stops cannot keep Run reading forever.
const maxFinalReads = 1024

// drain copies one output pipe into a capture until EOF. It exists because
// os/exec's own copying goroutines are cut off by WaitDelay with whatever is
// still in the kernel pipe buffer unread: on a loaded machine that lost output
// a process had written before it exited. A drain never drops buffered bytes:
// when Run gives up on a pipe that something still holds open, it first
// reads everything the pipe holds at that moment, then reports the stream as
// incomplete.
type drain struct {
	r    *os.File
	c    *capture
	done chan struct{}
	// incomplete is written by the goroutine before done is closed: the pipe
	// was still open (not at EOF) when Run stopped reading it.
	incomplete bool
}

func startDrain(r *os.File, c *capture) *drain {
	d := &drain{r: r, c: c, done: make(chan struct{})}
	go d.run()
	return d
}

func (d *drain) run() {
	defer close(d.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := d.r.Read(buf)
		_, _ = d.c.Write(buf[:n])
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			d.incomplete = !d.sweep(buf)
			return
		default: // io.EOF: every writer has closed its end
			return
		}
	}
}

// sweep reads what the pipe holds right now without waiting for more and
// reports whether it reached EOF.
func (d *drain) sweep(buf []byte) (eof bool) {
	_ = d.r.SetReadDeadline(time.Time{})
	rc, err := d.r.SyscallConn()
	if err != nil {
		return false
	}
	_ = rc.Read(func(fd uintptr) bool {
		for range maxFinalReads {
			n, err := syscall.Read(int(fd), buf)
			if n > 0 {
				_, _ = d.c.Write(buf[:n])
				continue
			}
			if err == syscall.EINTR {
				continue
			}
			eof = n == 0 && err == nil
			return true
		}
		return true
	})
	return eof
}

// stop waits up to wait for EOF, then stops reading (after the final sweep),
// closes the pipe and reports whether the stream was cut short.
func (d *drain) stop(wait time.Duration) (incomplete bool) {
	t := time.NewTimer(wait)
	select {
	case <-d.done:
	case <-t.C:
		_ = d.r.SetReadDeadline(time.Now())
		<-d.done
	}
	t.Stop()
	_ = d.r.Close()
	return d.incomplete
}
