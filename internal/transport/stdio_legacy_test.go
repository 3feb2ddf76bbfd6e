package transport

// The transport.Stdio of before it became its own connection, kept as the reference for the
// differential tests: the SDK's mcp.IOTransport, fed through a reader that
// screens each line and counts the requests read for the drain on EOF.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
)

// legacyStdio served newline-delimited JSON-RPC on r/w like the SDK's stdio
// transport, with one difference: when r ends (the client closed our stdin),
// requests already read are still answered before the session ends, so
// `printf '...' | agent-tools serve` gets every response. Drain bounds that wait.
func legacyStdio(r io.Reader, w io.Writer, drain time.Duration) sdk.Transport {
	t := &legacyDrainer{pending: map[string]bool{}, drain: drain}
	t.idle = sync.NewCond(&t.mu)
	cw := &legacyWriter{t: t, w: w}
	return &sdk.IOTransport{
		Reader: &legacyReader{t: t, br: bufio.NewReaderSize(r, 64<<10), reply: cw},
		Writer: cw,
	}
}

// screen answers a line that is not a JSON-RPC message with a JSON-RPC
// error and reports false, so that one stray line (a debug print, a typo
// in a hand-typed session) never reaches the SDK, whose decoder would end
// the session. Blank lines are dropped.
func legacyScreen(line []byte, reply io.Writer) bool {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return false
	}
	if trimmed[0] == '[' && json.Valid(trimmed) {
		return true // a batch: the SDK's to judge
	}
	code, msg := jsonrpc.CodeParseError, "parse error: the line is not valid JSON"
	if json.Valid(trimmed) {
		if _, err := jsonrpcwire.Decode(trimmed); err == nil { // jsonrpc.DecodeMessage, without its 64 KB
			return true
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
		_, _ = reply.Write(append(out, '\n')) // as the transport it copies: the next write reports it
	}
	return false
}

type legacyDrainer struct {
	mu      sync.Mutex
	idle    *sync.Cond
	pending map[string]bool // ids of requests read and not yet answered
	drain   time.Duration
}

func (t *legacyDrainer) saw(line []byte, inbound bool) {
	f, ok := frameOf(line) // not a full decode: the SDK decodes the message itself
	if !ok || len(f.ID) == 0 || string(f.ID) == "null" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case inbound && f.Method != "":
		t.pending[string(f.ID)] = true
	case !inbound && f.Method == "":
		delete(t.pending, string(f.ID))
		if len(t.pending) == 0 {
			t.idle.Broadcast()
		}
	}
}

// waitIdle blocks until every request read has been answered, or the drain
// time passed.
func (t *legacyDrainer) waitIdle() {
	ctx, cancel := context.WithTimeout(context.Background(), t.drain)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		t.mu.Lock()
		t.idle.Broadcast()
		t.mu.Unlock()
	})
	defer stop()
	t.mu.Lock()
	for len(t.pending) > 0 && ctx.Err() == nil {
		t.idle.Wait()
	}
	t.mu.Unlock()
}

type legacyReader struct {
	t     *legacyDrainer
	br    *bufio.Reader
	reply io.Writer // where screen answers lines that are not messages
	buf   []byte    // the unread rest of the current line
	done  bool
}

func (r *legacyReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 { // screened lines are skipped: read on
		if r.done {
			return 0, io.EOF
		}
		line, err := r.br.ReadBytes('\n')
		if len(line) > 0 && legacyScreen(line, r.reply) {
			r.t.saw(line, true)
			r.buf = line
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return 0, err
			}
			r.done = true
			if len(r.buf) == 0 {
				r.t.waitIdle()
				return 0, io.EOF
			}
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *legacyReader) Close() error { return nil }

type legacyWriter struct {
	t  *legacyDrainer
	mu sync.Mutex
	w  io.Writer
}

func (w *legacyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n, err := w.w.Write(p)
	w.mu.Unlock()
	// The SDK writes one message per call.
	w.t.saw(p, false)
	return n, err
}

func (w *legacyWriter) Close() error { return nil }

// streamFrom is the line length from which frameOf reads tokens instead of
// decoding the whole line (BenchmarkFrame: a full decode is faster for a
// call's few hundred bytes, the token reader thousands of times faster for
// a tools/list result of megabytes).
const streamFrom = 4 << 10

// frameOf reads what the drainer needs from one JSON-RPC line: its id and
// method. ok is false for anything that is not a JSON object.
func frameOf(line []byte) (frame, bool) {
	if len(line) < streamFrom {
		var f frame
		return f, json.Unmarshal(line, &f) == nil
	}
	return frameStream(line)
}

// frameStream reads the id and method with encoding/json's token reader,
// and stops as soon as it knows:
// after "id" and "method", or at "result"/"error" (a response). The SDK
// writes "id" and "method" before "params" and "result", so a call's
// arguments and a large tools/list result are not decoded a second time
// (the SDK decodes every message itself).
func frameStream(line []byte) (f frame, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return frame{}, false
	}
	haveMethod := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return frame{}, false
		}
		key, _ := t.(string)
		switch key {
		case "id":
			var id json.RawMessage
			if dec.Decode(&id) != nil {
				return frame{}, false
			}
			f.ID = id
		case "method":
			if dec.Decode(&f.Method) != nil {
				return frame{}, false
			}
			haveMethod = true
		case "result", "error":
			if len(f.ID) > 0 && !haveMethod {
				return f, true // a response: nothing after this matters
			}
			fallthrough
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return frame{}, false
			}
		}
		if len(f.ID) > 0 && haveMethod {
			return f, true
		}
	}
	return f, true
}

// frame is the part of a JSON-RPC message that has its id.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}
