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
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
)

// Stdio serves newline-delimited JSON-RPC on r/w as the SDK's stdio
// transport (mcp.IOTransport) does, batches included, with these differences:
//   - a line that is not a JSON-RPC message is answered with a JSON-RPC
//     error and skipped (the SDK ends the session), blank lines are dropped;
//   - a batch (a JSON array line) is answered as JSON-RPC 2.0 says and the
//     session goes on, where the SDK ends it: an empty array is an invalid
//     request, an element that is not a message gets its own error in the
//     batch's answer, notifications in a batch are not answered (the SDK
//     waits for their answer forever), and on protocol versions without
//     batches (2025-06-18 on) the whole line is refused with -32600;
//   - when r ends (the client closed our stdin), requests already read are
//     still answered before the session ends, so
//     `printf '...' | agent-tools serve` gets every response. Drain bounds
//     that wait.
//
// Each line is read once and decoded once, with jsonrpcwire (the SDK's
// stream decoder allocates a 32 KiB buffer per unmarshal, two per line).
// r and w are not closed.
func Stdio(r io.Reader, w io.Writer, drain time.Duration) sdk.Transport {
	return &stdioTransport{r: r, w: w, drain: drain}
}

// maxLine is the SDK's limit on one inbound message, which the stdio
// transport had through mcp.IOTransport: a longer line ends the session.
const maxLine = sdk.DefaultMaxLineLength

// errLineTooLong is the SDK's error for a message over its limit.
var errLineTooLong = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

type stdioTransport struct {
	r     io.Reader
	w     io.Writer
	drain time.Duration
}

func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) {
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

	mu      sync.Mutex
	idle    *sync.Cond
	pending map[jsonrpc.ID]bool   // requests read and not yet answered
	batches map[jsonrpc.ID]*batch // requests of batches, by id, until answered
	initID  jsonrpc.ID            // the initialize request read, if any
	// initAnswered is closed once the initialize request read is answered:
	// a batch read before then waits for it, since whether batches are
	// allowed depends on the version that answer negotiates.
	initAnswered chan struct{}
	version      string // the protocol version the initialize result gave
	drained      bool   // the drain time passed
	isClosed     bool
}

// inbound is one line's worth for Read: its message, a batch, or an error
// that ends the session (a line over the limit, the end of input).
type inbound struct {
	msgs  []jsonrpc.Message
	batch *batchIn
	err   error
}

// batchIn is a JSON array line, element by element.
type batchIn struct {
	elems []batchElem
	// added are the ids of its requests that the reader marked pending
	// (those not pending already): unmarked if the batch is refused.
	added []jsonrpc.ID
}

// batchElem is a message, or (msg nil) the error answering an element
// that is not one.
type batchElem struct {
	msg     jsonrpc.Message
	invalid *jsonrpc.Response
}

// batch collects the responses to the requests of one inbound batch: they
// are written as one JSON array once all are in, as the SDK does, in the
// order of the batch's elements, errors for its invalid elements included.
type batch struct {
	unresolved map[jsonrpc.ID]int // index in responses
	responses  []*jsonrpc.Response
}

// batchesFrom is the first protocol version that has no JSON-RPC batches:
// from it on, a batch is an invalid request.
const batchesFrom = "2025-06-18"

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message read. Close makes it return io.EOF.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for len(c.queue) == 0 {
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
		if in.batch == nil {
			c.queue = in.msgs
			continue
		}
		c.mu.Lock()
		initWait := c.initAnswered
		c.mu.Unlock()
		if initWait != nil {
			select {
			case <-initWait:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-c.closed:
				return nil, io.EOF
			}
		}
		msgs, reply := c.addBatch(in.batch)
		if reply != nil {
			// A write error shows again on the SDK's next Write.
			_, _ = lockedWriter{c}.Write(append(reply, '\n'))
		}
		c.queue = msgs
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.ID.IsValid() {
		c.mu.Lock()
		if !c.initID.IsValid() {
			c.initAnswered = make(chan struct{})
		}
		c.initID = req.ID
		c.mu.Unlock()
	}
	return msg, nil
}

// addBatch takes a batch: the messages to hand to the SDK, and what to
// write now, if anything (the refusal of the whole batch, or the errors for
// its elements when it has no request to wait for). Its requests are
// recorded so that Write collects their responses. A request whose id is
// already in use (earlier in the batch, or by a request in flight) is
// answered with an error in its place: two requests with one id cannot
// both be answered.
func (c *stdioConn) addBatch(in *batchIn) (msgs []jsonrpc.Message, reply []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version >= batchesFrom {
		for _, id := range in.added {
			delete(c.pending, id)
		}
		if len(c.pending) == 0 {
			c.idle.Broadcast()
		}
		return nil, encodeError(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: protocol version %s has no JSON-RPC batches (removed in %s)", c.version, batchesFrom))
	}
	ours := make(map[jsonrpc.ID]bool, len(in.added))
	for _, id := range in.added {
		ours[id] = true
	}
	b := &batch{unresolved: map[jsonrpc.ID]int{}, responses: make([]*jsonrpc.Response, 0, len(in.elems))}
	errs := 0
	for _, e := range in.elems {
		if e.msg == nil {
			b.responses = append(b.responses, e.invalid)
			errs++
			continue
		}
		req, ok := e.msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() { // a response, a notification: nothing to answer
			msgs = append(msgs, e.msg)
			continue
		}
		_, dup := b.unresolved[req.ID]
		_, inBatch := c.batches[req.ID]
		if dup || inBatch || (c.pending[req.ID] && !ours[req.ID]) {
			b.responses = append(b.responses, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
				Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("invalid request: id %v is already in use by another request", req.ID.Raw())}})
			errs++
			continue
		}
		b.unresolved[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
		msgs = append(msgs, e.msg)
	}
	if len(b.unresolved) == 0 {
		if errs > 0 {
			reply, _ = encodeBatch(b.responses) // only errors: cannot fail
		}
		return msgs, reply
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.unresolved {
		c.batches[id] = b
	}
	return msgs, nil
}

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
// as jsonrpc.EncodeMessage writes it, in a JSON array through json.Marshal;
// an error answering an element without an id has "id":null.
func encodeBatch(responses []*jsonrpc.Response) ([]byte, error) {
	raw := make([]json.RawMessage, len(responses))
	for i, r := range responses {
		var we *jsonrpc.Error
		if !r.ID.IsValid() && errors.As(r.Error, &we) {
			raw[i] = encodeError(r.ID, we.Code, we.Message)
			continue
		}
		b, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("encoding batch message: %w", err)
		}
		raw[i] = b
	}
	return json.Marshal(raw)
}

// encodeError is a JSON-RPC error response. Without an id (one could not
// be read from the request) it has "id":null, as JSON-RPC 2.0 requires;
// jsonrpc.EncodeMessage would leave the member out.
func encodeError(id jsonrpc.ID, code int64, msg string) []byte {
	out, _ := json.Marshal(struct { // strings and numbers: cannot fail
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), jsonrpc.Error{Code: code, Message: msg}})
	return out
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
	if c.initAnswered != nil && c.initID.IsValid() && resp.ID == c.initID {
		select {
		case <-c.initAnswered:
		default:
			defer close(c.initAnswered) // after the version is noted
		}
	}
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
				c.saw(&in)
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

// saw records the requests read, for the drain; those of a batch are noted
// in it, for addBatch to unmark if it refuses the batch.
func (c *stdioConn) saw(in *inbound) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range in.msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			c.pending[req.ID] = true
		}
	}
	if in.batch == nil {
		return
	}
	for _, e := range in.batch.elems {
		if req, ok := e.msg.(*jsonrpc.Request); ok && req.ID.IsValid() && !c.pending[req.ID] {
			c.pending[req.ID] = true
			in.batch.added = append(in.batch.added, req.ID)
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

// screenLine decodes one line: a message, or a batch. A line that is not
// JSON, is JSON but not a message, or is an empty array, is answered on
// reply and ok is false; so is a blank line, unanswered.
func screenLine(line []byte, reply io.Writer) (in inbound, ok bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		return inbound{}, false
	}
	trimmed := trimJSONSpace(line)
	code, msg := jsonrpc.CodeParseError, "parse error: the line is not valid JSON"
	if json.Valid(trimmed) {
		code, msg = jsonrpc.CodeInvalidRequest, "invalid request: the line is JSON but not a JSON-RPC 2.0 message"
		if trimmed[0] == '[' {
			var raw []json.RawMessage
			if jsonrpcwire.Unmarshal(trimmed, &raw) == nil { // else nested too deep: invalid
				if len(raw) > 0 {
					return inbound{batch: decodeBatch(raw)}, true
				}
				msg = "invalid request: an empty batch"
			}
		} else if m, err := jsonrpcwire.DecodeStrict(trimmed); err == nil {
			return inbound{msgs: []jsonrpc.Message{m}}, true
		} else if inv, ok := err.(*jsonrpcwire.Invalid); ok { // the SDK would answer it wrongly, or never
			_, _ = reply.Write(append(encodeError(inv.ID, jsonrpc.CodeInvalidRequest, inv.Error()), '\n'))
			return inbound{}, false
		}
	}
	// A write error shows again on the SDK's next Write, which ends the session.
	_, _ = reply.Write(append(encodeError(idOf(trimmed), int64(code), msg), '\n'))
	return inbound{}, false
}

// decodeBatch decodes the elements of a batch; each that is not a message
// gets its error, with its id if it has one.
func decodeBatch(raw []json.RawMessage) *batchIn {
	b := &batchIn{elems: make([]batchElem, len(raw))}
	for i, r := range raw {
		m, err := jsonrpcwire.DecodeStrict(r)
		if inv, ok := err.(*jsonrpcwire.Invalid); ok {
			b.elems[i].invalid = &jsonrpc.Response{ID: inv.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: inv.Error()}}
			continue
		}
		if err != nil {
			b.elems[i].invalid = &jsonrpc.Response{ID: idOf(r), Error: &jsonrpc.Error{
				Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: the batch element is not a JSON-RPC 2.0 message"}}
			continue
		}
		b.elems[i].msg = m
	}
	return b
}

// idOf is the id of what may be a JSON-RPC request, if it has a valid one
// (whatever its other members are).
func idOf(data []byte) jsonrpc.ID {
	var f struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &f) != nil {
		return jsonrpc.ID{}
	}
	return jsonrpcwire.ExactID(f.ID) // not one the SDK would mangle (1.5e308)
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
