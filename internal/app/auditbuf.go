package app

import (
	"bufio"
	"io"
	"os"
	"sync"
	"time"
)

// AuditFlushEvery bounds how long an audit line stays in memory before it
// is written to the audit file: a crash of the process loses at most the
// lines of the last interval; Close (shutdown, reload) writes everything.
const AuditFlushEvery = 100 * time.Millisecond

// auditBufSize is the buffer of the audit file: a few hundred lines.
const auditBufSize = 64 << 10

// auditBuffer is the audit file behind a buffer flushed AuditFlushEvery
// after the first unflushed line and on Close, so that a burst of calls
// costs one write syscall, not one each. Every write to the file holds
// whole lines, so two generations appending to one file across a reload
// never interleave inside a line.
type auditBuffer struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	timer  *time.Timer // pending flush; nil when the buffer is empty
	every  time.Duration
	closed bool
}

var (
	_ io.Writer = (*auditBuffer)(nil)
	_ io.Closer = (*auditBuffer)(nil)
)

// bufferedAudit wraps an opened audit file (openAudit's result shape).
func bufferedAudit(f *os.File) (io.Writer, io.Closer, error) {
	b := newAuditBuffer(f, AuditFlushEvery)
	return b, b, nil
}

func newAuditBuffer(f *os.File, every time.Duration) *auditBuffer {
	return &auditBuffer{f: f, w: bufio.NewWriterSize(f, auditBufSize), every: every}
}

// Write buffers p, which holds whole lines (the audit stage writes one
// record per call).
func (b *auditBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.f.Write(p) // late writers after Close: unbuffered (and failing if the file is closed)
	}
	if len(p) > b.w.Available() && b.w.Buffered() > 0 {
		if err := b.w.Flush(); err != nil {
			return 0, err
		}
	}
	if len(p) > b.w.Available() { // larger than the buffer: straight through
		return b.f.Write(p)
	}
	n, err := b.w.Write(p)
	if b.timer == nil {
		b.timer = time.AfterFunc(b.every, b.flush)
	}
	return n, err
}

// flush writes the buffered lines (the timer's callback).
func (b *auditBuffer) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timer = nil
	b.w.Flush()
}

// Flush writes the buffered lines now.
func (b *auditBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

// Close writes what is buffered and closes the file.
func (b *auditBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	err := b.w.Flush()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	return err
}
