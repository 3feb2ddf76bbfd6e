package jsrun

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The wire between the server and a script's child process (isolate.go,
// child.go) is a private protocol over the child's stdin and stdout: frames
// of a 4-byte big-endian length followed by that many bytes of one JSON
// message. It is not MCP nor JSON-RPC; both ends are this binary.
//
//	child  → parent {"t":"ready"}                           once its interpreter is made
//	parent → child  {"t":"run","run":{...}}                 once
//	child  → parent {"t":"req","id":1,"m":"search","d":...} a host call
//	parent → child  {"t":"res","id":1,"d":...}              its answer ("e" on failure)
//	child  → parent {"t":"done","out":{...}} or {"t":"done","fail":{...}}, then it exits
//
// Requests may overlap (a script's Promise.all); answers carry their id.

// MaxFrame bounds one frame (bytes). A message past it is refused by the
// sender and by the reader, which then treats the peer as broken.
const MaxFrame = 16 << 20

// errFrameTooLarge is a frame past MaxFrame.
var errFrameTooLarge = errors.New("jsrun: frame too large")

// readFrame reads one frame of at most max bytes.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if int64(n) > int64(max) {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errFrameTooLarge, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// keepFrameBuffer is the largest frame buffer a connection keeps for its
// next message.
const keepFrameBuffer = 64 << 10

// writeMessage encodes m straight into a frame (header and JSON in one
// buffer, buf's space reused) and writes it with one Write. The JSON has no
// HTML escaping: a result's JSON crosses the wire byte for byte. A message
// past MaxFrame is not written (errFrameTooLarge). It returns the
// buffer to reuse for the next message; w must not be shared without a
// lock, nor buf.
func writeMessage(w io.Writer, buf []byte, m *message) ([]byte, error) {
	b := bytes.NewBuffer(buf[:0])
	b.Write([]byte{0, 0, 0, 0})
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return buf, err
	}
	f := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if n := len(f) - 4; n > MaxFrame {
		return keep(buf, f), fmt.Errorf("%w: %d bytes, at most %d", errFrameTooLarge, n, MaxFrame)
	}
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	_, err := w.Write(f)
	return keep(buf, f), err
}

// keep is the buffer to reuse after f: f's own when it is small.
func keep(old, f []byte) []byte {
	if cap(f) <= keepFrameBuffer {
		return f[:0]
	}
	return old[:0]
}

// message is one frame's JSON.
type message struct {
	T    string          `json:"t"`
	ID   uint64          `json:"id,omitempty"`
	M    string          `json:"m,omitempty"`
	D    json.RawMessage `json:"d,omitempty"`
	E    string          `json:"e,omitempty"`
	Run  *Script         `json:"run,omitempty"`
	Out  *Output         `json:"out,omitempty"`
	Fail *wireError      `json:"fail,omitempty"`
}

// Message types.
const (
	msgReady = "ready"
	msgRun   = "run"
	msgReq   = "req"
	msgRes   = "res"
	msgDone  = "done"
)

// decodeMessage parses a frame and checks that it is well formed.
func decodeMessage(b []byte) (*message, error) {
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("jsrun: bad frame: %w", err)
	}
	switch m.T {
	case msgReady:
	case msgRun:
		if m.Run == nil {
			return nil, errors.New("jsrun: bad frame: run without a script")
		}
	case msgReq:
		if m.ID == 0 || m.M == "" {
			return nil, errors.New("jsrun: bad frame: request without id or method")
		}
	case msgRes:
		if m.ID == 0 {
			return nil, errors.New("jsrun: bad frame: answer without id")
		}
	case msgDone:
		if (m.Out == nil) == (m.Fail == nil) {
			return nil, errors.New("jsrun: bad frame: done needs exactly one of out and fail")
		}
	default:
		return nil, fmt.Errorf("jsrun: bad frame: unknown type %q", m.T)
	}
	return &m, nil
}

// wireError is an *Error on the wire (its thrown value stays in the child:
// the host's annotation travels instead).
type wireError struct {
	Kind      Kind            `json:"kind"`
	Message   string          `json:"message"`
	Line      int             `json:"line,omitempty"`
	Column    int             `json:"column,omitempty"`
	Stack     string          `json:"stack,omitempty"`
	Console   []Entry         `json:"console,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	Host      json.RawMessage `json:"host,omitempty"`
}

func toWire(e *Error) *wireError {
	return &wireError{Kind: e.Kind, Message: e.Message, Line: e.Line, Column: e.Column, Stack: e.Stack,
		Console: e.Console, Truncated: e.Truncated, Host: e.Host}
}

func (w *wireError) error() *Error {
	return &Error{Kind: w.Kind, Message: w.Message, Line: w.Line, Column: w.Column, Stack: w.Stack,
		Console: w.Console, Truncated: w.Truncated, Host: w.Host}
}
