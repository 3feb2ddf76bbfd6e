package workers

import (
	"bytes"
	"encoding/json"
	"sync"
)

// maxEventLine bounds the line the tap keeps while it waits for its end: an
// event longer than this is counted but its kind is not read.
const maxEventLine = 64 << 10

// eventTap watches a JSONL worker's stdout as it arrives (proc.Spec.OnStdout)
// and remembers how many events went by and the kind ("type") of the last,
// so progress notifications say what the worker is doing, not only how long
// it has run. The final result is still parsed from the whole output.
type eventTap struct {
	mu       sync.Mutex
	line     []byte
	overlong bool
	events   int
	last     string
}

// Write takes one chunk of stdout; it never fails.
func (t *eventTap) Write(chunk []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if len(t.line)+len(part) > maxEventLine {
			t.overlong = true
		} else if !t.overlong {
			t.line = append(t.line, part...)
		}
		if i < 0 {
			return
		}
		t.endLine()
		chunk = chunk[i+1:]
	}
}

func (t *eventTap) endLine() {
	line := bytes.TrimSpace(t.line)
	if len(line) > 0 || t.overlong {
		t.events++
		var ev struct {
			Type string `json:"type"`
		}
		if !t.overlong && json.Unmarshal(line, &ev) == nil && ev.Type != "" {
			t.last = ev.Type
		}
	}
	t.line, t.overlong = t.line[:0], false
}

// seen returns the events so far and the last event's kind.
func (t *eventTap) seen() (int, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.events, t.last
}
