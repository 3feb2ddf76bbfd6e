package jsrun

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func frame(payload string) []byte {
	b := make([]byte, 4+len(payload))
	binary.BigEndian.PutUint32(b, uint32(len(payload)))
	copy(b[4:], payload)
	return b
}

func TestReadFrame(t *testing.T) {
	big := make([]byte, 4)
	binary.BigEndian.PutUint32(big, MaxFrame+1)
	tests := []struct {
		name string
		in   []byte
		want string
		err  error // errors.Is target; nil: success
	}{
		{"empty payload", frame(""), "", nil},
		{"one message", frame(`{"t":"res","id":1}`), `{"t":"res","id":1}`, nil},
		{"no header", nil, "", io.EOF},
		{"short header", []byte{0, 0}, "", io.ErrUnexpectedEOF},
		{"short payload", frame("abc")[:5], "", io.ErrUnexpectedEOF},
		{"too large", big, "", errFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readFrame(bytes.NewReader(tt.in), MaxFrame)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		in, err string // err: substring; "" = valid
	}{
		{`{"t":"run","run":{"code":"1"}}`, ""},
		{`{"t":"req","id":3,"m":"search","d":{"query":"x"}}`, ""},
		{`{"t":"res","id":3,"d":[]}`, ""},
		{`{"t":"res","id":3,"e":"broken"}`, ""},
		{`{"t":"done","out":{"result":1,"console":[],"truncated":false}}`, ""},
		{`{"t":"done","fail":{"kind":"exception","message":"x"}}`, ""},
		{`{"t":"run"}`, "run without a script"},
		{`{"t":"req","id":0,"m":"x"}`, "request without id"},
		{`{"t":"req","id":1}`, "request without id or method"},
		{`{"t":"res"}`, "answer without id"},
		{`{"t":"done"}`, "exactly one of out and fail"},
		{`{"t":"done","out":{},"fail":{}}`, "exactly one of out and fail"},
		{`{"t":"hello"}`, "unknown type"},
		{`[1,2]`, "bad frame"},
		{``, "bad frame"},
	}
	for _, tt := range tests {
		m, err := decodeMessage([]byte(tt.in))
		switch {
		case tt.err == "" && (err != nil || m == nil):
			t.Errorf("%s: %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: err %v, want %q", tt.in, err, tt.err)
		}
	}
}

// A message survives the wire byte for byte (no HTML escaping of a result).
func TestMessageRoundTrip(t *testing.T) {
	in := &message{T: msgDone, Out: &Output{Result: []byte(`{"sig":"f(): Promise<any> & more"}`), Console: []Entry{{Level: "log", Text: "<b>"}}}}
	var buf bytes.Buffer
	reuse, err := writeMessage(&buf, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	// The buffer is reused: the next message does not see the last one's bytes.
	if _, err := writeMessage(&buf, reuse, &message{T: msgRes, ID: 7, D: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	raw, err := readFrame(&buf, MaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeMessage(raw)
	if err != nil || string(out.Out.Result) != `{"sig":"f(): Promise<any> & more"}` || out.Out.Console[0].Text != "<b>" {
		t.Fatalf("%s %v", raw, err)
	}
	raw, err = readFrame(&buf, MaxFrame)
	if err != nil || string(raw) != `{"t":"res","id":7,"d":[]}` {
		t.Fatalf("second frame %q %v", raw, err)
	}
	var w countWriter
	big := &message{T: msgRes, ID: 1, E: strings.Repeat("x", MaxFrame)}
	if _, err := writeMessage(&w, nil, big); !errors.Is(err, errFrameTooLarge) || w.n != 0 {
		t.Fatalf("oversized write: %v, %d bytes written", err, w.n)
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// FuzzFrames: the reader never panics, never returns more than its limit,
// and what decodes as a message re-encodes and decodes again.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{`{"t":"res","id":1,"d":{}}`, `{"t":"done","fail":{"kind":"memory","message":"m"}}`, `{"t":"req","id":9,"m":"call","d":null}`, "", "\x00"} {
		f.Add(frame(s))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			b, err := readFrame(r, 1<<16)
			if err != nil {
				return
			}
			if len(b) > 1<<16 {
				t.Fatalf("frame of %d bytes past the limit", len(b))
			}
			m, err := decodeMessage(b)
			if err != nil {
				continue
			}
			var w bytes.Buffer
			if _, err := writeMessage(&w, nil, m); err != nil {
				if errors.Is(err, errFrameTooLarge) {
					continue
				}
				t.Fatalf("re-encoding %q: %v", b, err)
			}
			again, err := readFrame(&w, MaxFrame)
			if err != nil || w.Len() != 0 {
				t.Fatalf("%q re-encoded does not read back as one frame: %v", b, err)
			}
			if _, err := decodeMessage(again); err != nil {
				t.Fatalf("%q re-encoded as %q does not decode: %v", b, again, err)
			}
		}
	})
}
