package app

import (
	"io"
	"sync"
)

// auditTapRecent is how many audit lines a new subscriber gets first.
const auditTapRecent = 100

// auditTap fans the audit lines out to live subscribers (the console's
// activity tail) and keeps the last few for a subscriber that arrives
// later. It outlives reloads, like the enabled set: every generation's
// audit writer is teed into it. A slow subscriber loses lines rather than
// slowing calls: the audit file stays the record.
type auditTap struct {
	mu     sync.Mutex
	subs   map[int]chan []byte
	nextID int
	recent [][]byte
}

// teeWriter writes to the audit destination, then to the tap.
type teeWriter struct {
	w   io.Writer
	tap *auditTap
}

var _ io.Writer = teeWriter{}

func (t teeWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.tap.publish(p)
	return n, err
}

// tee wraps the audit writer of a generation (nil stays nil: audit off).
func (t *auditTap) tee(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return teeWriter{w: w, tap: t}
}

func (t *auditTap) publish(p []byte) {
	line := append([]byte(nil), p...) // the writer may reuse p
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.recent) == auditTapRecent {
		copy(t.recent, t.recent[1:])
		t.recent = t.recent[:auditTapRecent-1]
	}
	t.recent = append(t.recent, line)
	for _, ch := range t.subs {
		select {
		case ch <- line:
		default: // full: this subscriber misses the line
		}
	}
}

// SubscribeAudit returns the last audit lines (oldest first), a channel of
// the lines written from now on, and a cancel that closes the channel.
// Each line is one JSON record as written to the audit log (already
// scrubbed of secrets). With audit off, nothing is ever sent.
func (a *App) SubscribeAudit() (recent [][]byte, lines <-chan []byte, cancel func()) {
	t := &a.tap
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.subs == nil {
		t.subs = map[int]chan []byte{}
	}
	id := t.nextID
	t.nextID++
	ch := make(chan []byte, 64)
	t.subs[id] = ch
	recent = append([][]byte(nil), t.recent...)
	var once sync.Once
	return recent, ch, func() {
		once.Do(func() {
			t.mu.Lock()
			delete(t.subs, id)
			t.mu.Unlock()
			close(ch)
		})
	}
}
