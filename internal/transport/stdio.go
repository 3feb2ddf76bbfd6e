// Package transport adapts byte streams and HTTP to the MCP SDK's transports.
package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
)

// Stdio serves newline-delimited JSON-RPC on r/w as the SDK's stdio
// transport (mcp.IOTransport) does, batches included, with two differences:
//   - a line that is not a JSON-RPC message is answered with a JSON-RPC
//     error and skipped (the SDK ends the session), blank lines are dropped;
//   - when r ends (the client closed our stdin), requests already read are
//     still answered before the session ends, so
//     `printf '...' | agent-tools serve` gets every response. Drain bounds
//     that wait.
//
// Each line is read once and decoded once, with jsonrpcwire (the SDK's
// stream decoder allocates a 32 KiB buffer per unmarshal, two per line).
// r and w are not closed.
func Stdio(r io.Reader, w io.Writer, drain time.Duration) mcp.Transport {
	return &stdioTransport{r: r, w: w, drain: drain}
}

// maxLine is the SDK's limit on one inbound message, which the stdio
// transport had through mcp.IOTransport: a longer line ends the session.
const maxLine = mcp.DefaultMaxLineLength

// errLineTooLong is the SDK's error for a message over its limit.
var errLineTooLong = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

type stdioTransport struct {
	r     io.Reader
	w     io.Writer
	drain time.Duration
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		w:        t.w,
		drain:    t.drain,
		incoming: make(chan inbound),
		closed:   make(chan struct{}),
		pending:  map[jsonrpc.ID]bool{},
	}
	c.idle = sync.NewCond(&c.mu)
	// Lines are read in a goroutine, as the SDK's IOTransport does, so that
	// Close ends a Read waiting for input (r need not be closable). It
	// lingers until r returns if r never does; the SDK's does too.
	go c.readLines(bufio.NewReaderSize(t.r, 64<<10))
	return c, nil
}

// stdioConn is an mcp.Connection over newline-delimited JSON-RPC.
type stdioConn struct {
	w       io.Writer
	writeMu sync.Mutex // one message (or one batch of responses) per write
	drain   time.Duration

	incoming  chan inbound // from readLines
	closed    chan struct{}
	closeOnce sync.Once
	queue     []jsonrpc.Message // the rest of a batch: Read has a single caller

	mu       sync.Mutex
	idle     *sync.Cond
	pending  map[jsonrpc.ID]bool   // requests read and not yet answered
	batches  map[jsonrpc.ID]*batch // requests of batches, by id, until answered
	initID   jsonrpc.ID            // the initialize request read, if any
	version  string                // the protocol version the initialize result gave
	drained  bool                  // the drain time passed
	isClosed bool
}

// inbound is one line's worth for Read: its messages, or an error that ends
// the session (a malformed batch, the end of input).
type inbound struct {
	msgs  []jsonrpc.Message
	batch bool
	err   error
}

// batch collects the responses to the requests of one inbound batch: they
// are written as one JSON array once all are in, as the SDK does.
type batch struct {
	unresolved map[jsonrpc.ID]int // index in responses
	responses  []*jsonrpc.Response
}

// batchesFrom is the first protocol version that has no JSON-RPC batches:
// from it on, the SDK refuses them (and ends the session).
const batchesFrom = "2025-06-18"

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message read. Close makes it return io.EOF.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) == 0 {
		var in inbound
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case in = <-c.incoming:
		case <-c.closed:
			return nil, io.EOF
		}
		if in.err != nil {
			return nil, in.err
		}
		if in.batch {
			if err := c.addBatch(in.msgs); err != nil {
				return nil, err
			}
		}
		c.queue = in.msgs
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.ID.IsValid() {
		c.mu.Lock()
		c.initID = req.ID
		c.mu.Unlock()
	}
	return msg, nil
}

// addBatch checks a batch as the SDK's ioConn.Read does (in its order, with
// its errors, each of which ends the session) and records its requests so
// that Write collects their responses.
func (c *stdioConn) addBatch(msgs []jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version >= batchesFrom {
		return fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchesFrom, c.version)
	}
	var b *batch
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if b == nil {
			b = &batch{unresolved: map[jsonrpc.ID]int{}}
		}
		// Notifications count, as the SDK (v1.8.0) counts them: they all
		// share the zero id, so two in a batch are a duplicate, and one
		// keeps its batch from ever being complete (and written).
		if _, dup := b.unresolved[req.ID]; dup {
			return fmt.Errorf("duplicate message ID %q", req.ID)
		}
		b.unresolved[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if b == nil {
		return nil
	}
	for id := range b.unresolved {
		if _, ok := c.batches[id]; ok {
			return fmt.Errorf("%w: batch contains previously seen request %v", errInvalidRequest, id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	_, never := b.unresolved[jsonrpc.ID{}] // a notification is never answered
	for id := range b.unresolved {
		c.batches[id] = b
		if never { // so the batch is never written: the drain need not wait for it
			delete(c.pending, id)
		}
	}
	if never && len(c.pending) == 0 {
		c.idle.Broadcast()
	}
	return nil
}

// errInvalidRequest is the SDK's jsonrpc2.ErrInvalidRequest.
var errInvalidRequest = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}

// Write writes msg on one line; a response to a request of a batch is held
// until the batch is complete, then all are written as one JSON array.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	resp, _ := msg.(*jsonrpc.Response)
	var data []byte
	var answered []*jsonrpc.Response
	if resp != nil {
		c.noteVersion(resp)
		responses, inBatch := c.updateBatch(resp)
		if inBatch && responses == nil {
			return nil // more to come
		}
		if inBatch {
			var err error
			if data, err = encodeBatch(responses); err != nil {
				return err
			}
			answered = responses
		} else {
			answered = []*jsonrpc.Response{resp}
		}
	}
	if data == nil {
		var err error
		if data, err = jsonrpc.EncodeMessage(msg); err != nil {
			return fmt.Errorf("marshaling message: %v", err)
		}
	}
	_, err := c.w.Write(append(data, '\n'))
	if len(answered) > 0 {
		c.answered(answered)
	}
	return err
}

// encodeBatch is the SDK's encoding of a batch of responses: each message
// as jsonrpc.EncodeMessage writes it, in a JSON array through json.Marshal.
func encodeBatch(responses []*jsonrpc.Response) ([]byte, error) {
	raw := make([]json.RawMessage, len(responses))
	for i, r := range responses {
		b, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("encoding batch message: %w", err)
		}
		raw[i] = b
	}
	return json.Marshal(raw)
}

// updateBatch records resp if it answers a request of a batch; responses
// is the whole batch's once resp completes it.
func (c *stdioConn) updateBatch(resp *jsonrpc.Response) (responses []*jsonrpc.Response, inBatch bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.unresolved[resp.ID]] = resp
	delete(b.unresolved, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.unresolved) > 0 {
		return nil, true
	}
	return b.responses, true
}

// noteVersion reads the negotiated protocol version from the result of
// the initialize request, which is what the SDK's connection learns from
// the session (and which decides whether batches are allowed).
func (c *stdioConn) noteVersion(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != "" || !c.initID.IsValid() || resp.ID != c.initID || resp.Error != nil || len(resp.Result) == 0 {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &r) == nil {
		c.version = r.ProtocolVersion
	}
}

// Close ends a Read in progress and any Read after (io.EOF). r and w stay
// open.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.mu.Lock()
		c.isClosed = true
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	return nil
}

// readLines reads lines from br, answers those that are not messages, and
// hands the messages to Read until br ends; then, once the requests read
// are answered (or the drain time passed), io.EOF.
func (c *stdioConn) readLines(br *bufio.Reader) {
	var buf []byte // a line longer than br's buffer is assembled here
	reply := lockedWriter{c}
	for {
		line, err := readLine(br, &buf)
		if len(line) > 0 {
			if in, ok := screenLine(line, reply); ok {
				c.saw(in.msgs)
				if !c.send(in) {
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.waitIdle()
				err = io.EOF
			}
			c.send(inbound{err: err})
			return
		}
		if cap(buf) > 1<<20 { // do not keep a huge buffer for the rest of the session
			buf = nil
		}
	}
}

// readLine returns the next line, newline included, valid until the next
// call (jsonrpcwire copies what it keeps). A line over maxLine is an error,
// and is not read further; with an error, line is what came before it.
func readLine(br *bufio.Reader, buf *[]byte) (line []byte, err error) {
	chunk, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return chunk, err // the common case: the line is in br's buffer
	}
	b := append((*buf)[:0], chunk...)
	for err == bufio.ErrBufferFull {
		chunk, err = br.ReadSlice('\n')
		b = append(b, chunk...)
		if n := len(b); n > maxLine && !(n == maxLine+1 && b[n-1] == '\n') {
			*buf = b[:0]
			return nil, errLineTooLong
		}
	}
	*buf = b
	return b, err
}

func (c *stdioConn) send(in inbound) bool {
	select {
	case c.incoming <- in:
		return true
	case <-c.closed:
		return false
	}
}

// saw records the requests read, for the drain.
func (c *stdioConn) saw(msgs []jsonrpc.Message) {
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			c.mu.Lock()
			c.pending[req.ID] = true
			c.mu.Unlock()
		}
	}
}

// answered records responses written.
func (c *stdioConn) answered(responses []*jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range responses {
		delete(c.pending, r.ID)
	}
	if len(c.pending) == 0 {
		c.idle.Broadcast()
	}
}

// waitIdle blocks until every request read has been answered, the drain
// time passed, or the connection was closed.
func (c *stdioConn) waitIdle() {
	t := time.AfterFunc(c.drain, func() {
		c.mu.Lock()
		c.drained = true
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	defer t.Stop()
	c.mu.Lock()
	for len(c.pending) > 0 && !c.drained && !c.isClosed {
		c.idle.Wait()
	}
	c.mu.Unlock()
}

// lockedWriter writes the answers to lines that are not messages between
// the connection's own writes.
type lockedWriter struct{ c *stdioConn }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.c.writeMu.Lock()
	defer w.c.writeMu.Unlock()
	return w.c.w.Write(p)
}

// screen answers a line that is not a JSON-RPC message (or batch) with a
// JSON-RPC error and reports false, so that one stray line (a debug print,
// a typo in a hand-typed session) does not end the session. Blank lines
// are dropped.
func screen(line []byte, reply io.Writer) bool {
	_, ok := screenLine(line, reply)
	return ok
}

// screenLine decodes one line: a message, or a batch (a malformed batch is
// an error for Read to return, as the SDK's). A line that is not JSON, or
// is JSON but not a message, is answered on reply and ok is false; so is a
// blank line, unanswered.
func screenLine(line []byte, reply io.Writer) (in inbound, ok bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		return inbound{}, false
	}
	trimmed := trimJSONSpace(line)
	code, msg := jsonrpc.CodeParseError, "parse error: the line is not valid JSON"
	if json.Valid(trimmed) {
		if trimmed[0] == '[' {
			msgs, isBatch, err := jsonrpcwire.DecodeBatch(trimmed)
			return inbound{msgs: msgs, batch: isBatch, err: err}, true
		}
		m, err := jsonrpcwire.Decode(trimmed)
		if err == nil {
			return inbound{msgs: []jsonrpc.Message{m}}, true
		}
		code, msg = jsonrpc.CodeInvalidRequest, "invalid request: the line is JSON but not a JSON-RPC 2.0 message"
	}
	var id jsonrpc.ID
	var f frame
	if json.Unmarshal(trimmed, &f) == nil && len(f.ID) > 0 {
		var v any
		if json.Unmarshal(f.ID, &v) == nil {
			id, _ = jsonrpc.MakeID(v)
		}
	}
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: int64(code), Message: msg}})
	if err == nil {
		reply.Write(append(out, '\n'))
	}
	return inbound{}, false
}

// trimJSONSpace trims what JSON counts as white space (and the SDK's
// decoder skips) around a value.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// frame is the part of a JSON-RPC message that has its id.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}
