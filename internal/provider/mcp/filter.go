package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
	"github.com/agent-tools/agent-tools/internal/text"
)

// lineFilter reads an upstream's stdout, one newline-delimited message per
// line, and passes on only well-formed JSON-RPC messages of at most max
// bytes. The SDK's own reader would give up on the whole connection at the
// first line that is too long, is not JSON, or is not JSON-RPC: an upstream
// that logs to stdout, or answers one call with 50 MB, would then take every
// other call down with it. A bad line that is recognisably the answer to one
// of our calls in flight becomes a JSON-RPC error for that call (so it fails
// at once with a clear message, not at its deadline); any other bad line is
// dropped and reported.
type lineFilter struct {
	r       *bufio.Reader
	closer  io.Closer
	max     int
	pending *pendingCalls
	report  func(format string, args ...any)

	line []byte // the line being assembled
	err  error  // the reader's error, returned after the last line
}

// headTail is how much of an oversized line is kept to look for its id.
const headTail = 512

func newLineFilter(r io.ReadCloser, max int, pending *pendingCalls, report func(string, ...any)) *lineFilter {
	return &lineFilter{r: bufio.NewReaderSize(r, 64<<10), closer: r, max: max, pending: pending, report: report}
}

func (f *lineFilter) Close() error { return f.closer.Close() }

// next reads one line and returns its messages: none for a blank or dropped
// line, several for a batch. The error is the reader's (io.EOF at the end).
func (f *lineFilter) next() ([]jsonrpc.Message, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.line = f.line[:0]
	if cap(f.line) > 1<<20 { // do not keep a huge buffer for the rest of the session
		f.line = nil
	}
	var head []byte
	tail := make([]byte, 0, headTail)
	over := int64(0)
	for {
		chunk, err := f.r.ReadSlice('\n')
		if over == 0 && len(f.line)+len(chunk) <= f.max {
			f.line = append(f.line, chunk...)
		} else {
			if over == 0 {
				head = append(head, f.line[:min(len(f.line), headTail)]...)
				if len(head) < headTail {
					head = append(head, chunk[:min(len(chunk), headTail-len(head))]...)
				}
				over = int64(len(f.line))
				tail = keepTail(tail, f.line)
				f.line = f.line[:0]
			}
			over += int64(len(chunk))
			tail = keepTail(tail, chunk)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			f.err = err
		}
		break
	}
	if over > 0 {
		return f.bad(head, tail, fmt.Sprintf("the upstream sent a message of %s, over the %s limit", size(over), size(int64(f.max)))), nil
	}
	msg := bytes.TrimSpace(f.line)
	if len(msg) == 0 {
		return nil, nil
	}
	if msgs, ok := decodeLine(msg); ok {
		return msgs, nil
	}
	return f.bad(msg[:min(len(msg), headTail)], msg[max(0, len(msg)-headTail):], "the upstream sent a malformed message (not a JSON-RPC message)"), nil
}

// bad handles a line that cannot be passed on.
func (f *lineFilter) bad(head, tail []byte, why string) []jsonrpc.Message {
	if raw := responseID(head, tail); raw != nil {
		if id, ok := f.pending.match(raw); ok {
			f.report("%s; failed the call it answered (id %s)", why, raw)
			return []jsonrpc.Message{&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why}}}
		}
	}
	f.report("%s; dropped it: %q", why, text.Clip(string(head), 120))
	return nil
}

// decodeLine decodes one JSON-RPC message, or a batch of them.
func decodeLine(line []byte) ([]jsonrpc.Message, bool) {
	switch line[0] {
	case '{':
		m, err := jsonrpcwire.Decode(line) // copies what it keeps: line's buffer is reused
		if err != nil {
			return nil, false
		}
		return []jsonrpc.Message{m}, true
	case '[':
		var batch []json.RawMessage // copies
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return nil, false
		}
		msgs := make([]jsonrpc.Message, 0, len(batch))
		for _, b := range batch {
			m, err := jsonrpcwire.Decode(b)
			if err != nil {
				return nil, false
			}
			msgs = append(msgs, m)
		}
		return msgs, true
	}
	return nil, false
}

func keepTail(tail, b []byte) []byte {
	if len(b) >= headTail {
		return append(tail[:0], b[len(b)-headTail:]...)
	}
	if len(tail)+len(b) > headTail {
		tail = append(tail[:0], tail[len(tail)+len(b)-headTail:]...)
	}
	return append(tail, b...)
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// An id is looked for where encoders put it: first (after "jsonrpc", as Go
// and Python SDKs write) or last (as the TypeScript SDK writes).
var (
	headIDRE = regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*,`)
	tailIDRE = regexp.MustCompile(`,\s*"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`)
)

// responseID finds the id of a message from its first and last bytes, or nil.
// A request from the upstream (it has a method) is never taken for a response.
func responseID(head, tail []byte) []byte {
	if bytes.Contains(head, []byte(`"method"`)) {
		return nil
	}
	if m := headIDRE.FindSubmatch(head); m != nil {
		return m[1]
	}
	if m := tailIDRE.FindSubmatch(tail); m != nil {
		return m[1]
	}
	return nil
}

// pendingCalls are the ids of our requests still waiting for an answer.
type pendingCalls struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]struct{}
}

func newPendingCalls() *pendingCalls { return &pendingCalls{ids: map[jsonrpc.ID]struct{}{}} }

func (c *pendingCalls) add(id jsonrpc.ID) {
	c.mu.Lock()
	c.ids[id] = struct{}{}
	c.mu.Unlock()
}

func (c *pendingCalls) remove(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.ids, id)
	c.mu.Unlock()
}

// match parses a raw JSON id and reports whether a call with it is pending.
func (c *pendingCalls) match(raw []byte) (jsonrpc.ID, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	c.mu.Lock()
	_, ok := c.ids[id]
	c.mu.Unlock()
	return id, ok
}

// stdioConn is the JSON-RPC connection to a stdio upstream: messages are
// read from its stdout through a lineFilter in the SDK's reading goroutine
// (no extra goroutine and channel hop per message, as the SDK's IOTransport
// has) and written to its stdin one per line. It records the ids of our calls
// in flight so that the filter can tell which bad lines answer them.
type stdioConn struct {
	in      *lineFilter
	out     io.WriteCloser
	pending *pendingCalls
	queue   []jsonrpc.Message // the rest of a batch; Read has a single caller
	notes   *noteOrder        // orders notifications before answers (passthrough sessions)
	capture *listCapture      // takes tools/list results off the wire (the shared session; see capture.go)
	// noteRead: a notification was read since the last barrier (Read's own).
	noteRead bool

	outMu     sync.Mutex
	closeOnce sync.Once
}

// stdioTransport hands its connection to the SDK once.
type stdioTransport struct{ conn *stdioConn }

func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) { return t.conn, nil }

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for len(c.queue) == 0 {
		msgs, err := c.in.next() // Close interrupts it: the pipe is pollable
		if err != nil {
			return nil, err
		}
		c.queue = msgs
	}
	msg := c.queue[0]
	if resp, ok := msg.(*jsonrpc.Response); ok && c.noteRead {
		// A barrier goes first: the answer's call waits until it is
		// reached, that is, until the notifications before it are handled
		// (noteOrder). The answer is read next.
		c.noteRead = false
		b, _, ch := c.notes.barrier()
		c.notes.beforeAnswer(ch)
		return b, nil
	} else if ok {
		c.pending.remove(resp.ID)
		c.capture.received(resp)
	}
	c.queue = c.queue[1:]
	if req, ok := msg.(*jsonrpc.Request); ok && c.notes != nil && isNote(req) {
		c.noteRead = true
	}
	return msg, nil
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	req, call := msg.(*jsonrpc.Request)
	call = call && req.IsCall()
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if call {
		c.pending.add(req.ID)
		c.capture.sent(req)
	}
	if _, err := c.out.Write(data); err != nil {
		if call {
			c.pending.remove(req.ID)
			c.capture.unsent(req)
		}
		return err
	}
	return nil
}

// Close closes both pipes; a Read in progress returns.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.out.Close()
		c.in.Close()
	})
	return nil
}

func (c *stdioConn) SessionID() string { return "" }
