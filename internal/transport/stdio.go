// Package transport adapts byte streams and HTTP to the MCP SDK's transports.
package transport

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
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
)

// Stdio serves newline-delimited JSON-RPC on r/w like the SDK's stdio
// transport, with one difference: when r ends (the client closed our stdin),
// requests already read are still answered before the session ends, so
// `printf '...' | agent-tools serve` gets every response. Drain bounds that wait.
func Stdio(r io.Reader, w io.Writer, drain time.Duration) mcp.Transport {
	t := &drainer{pending: map[string]bool{}, drain: drain}
	t.idle = sync.NewCond(&t.mu)
	cw := &countingWriter{t: t, w: w}
	return &mcp.IOTransport{
		Reader: &countingReader{t: t, br: bufio.NewReaderSize(r, 64<<10), reply: cw},
		Writer: cw,
	}
}

// screen answers a line that is not a JSON-RPC message with a JSON-RPC
// error and reports false, so that one stray line (a debug print, a typo
// in a hand-typed session) never reaches the SDK, whose decoder would end
// the session. Blank lines are dropped.
func screen(line []byte, reply io.Writer) bool {
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
		reply.Write(append(out, '\n'))
	}
	return false
}

type drainer struct {
	mu      sync.Mutex
	idle    *sync.Cond
	pending map[string]bool // ids of requests read and not yet answered
	drain   time.Duration
}

// frame is the part of a JSON-RPC message that tells requests from responses.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (t *drainer) saw(line []byte, inbound bool) {
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
func (t *drainer) waitIdle() {
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

type countingReader struct {
	t     *drainer
	br    *bufio.Reader
	reply io.Writer // where screen answers lines that are not messages
	buf   []byte    // the unread rest of the current line
	done  bool
}

func (r *countingReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 { // screened lines are skipped: read on
		if r.done {
			return 0, io.EOF
		}
		line, err := r.br.ReadBytes('\n')
		if len(line) > 0 && screen(line, r.reply) {
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

func (r *countingReader) Close() error { return nil }

type countingWriter struct {
	t  *drainer
	mu sync.Mutex
	w  io.Writer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n, err := w.w.Write(p)
	w.mu.Unlock()
	// The SDK writes one message per call.
	w.t.saw(p, false)
	return n, err
}

func (w *countingWriter) Close() error { return nil }
