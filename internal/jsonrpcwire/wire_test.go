package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzDecode: Decode accepts exactly what the go-sdk's
// jsonrpc.DecodeMessage accepts, and what it returns encodes to the same
// bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","id":null,"method":"m"}`, `{"jsonrpc":"2.0","id":{"x":1},"method":"m"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"m"}`, `{"jsonrpc":"2.0","id":true,"method":"m"}`, `{"jsonrpc":"1.0","id":1,"method":"m"}`,
		`{"JSONRPC":"2.0","id":1,"method":"m"}`, `{"jsonrpc":"2.0","ID":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"Method":"m"}`,
		`{"jsonrpc":2,"id":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":5}`, `{"jsonrpc":"2.0","id":1,"method":null}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`, `{"jsonrpc":"2.0","id":1,"error":"x"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, `{"jsonrpc":"2.0","id":1,"params":5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"m"}`, `{"jsonrpc":"2.0","id":-0,"method":"m"}`, `{"jsonrpc":"2.0","id":1,"method":"m","jsonrpc":"1.0"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m\u0000"}`, `{"jsonrpc":"2.0\u0000","id":1,"method":"m"}`, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}",
		`[]`, `1`, `"x"`, `null`, `{}`, `{"jsonrpc":"2.0","id":1,"params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"params":"` + strings.Repeat("[", 1001) + `","method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want, werr := jsonrpc.DecodeMessage(line)
		got, gerr := Decode(line)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: Decode error %v, DecodeMessage error %v", line, gerr, werr)
		}
		if werr != nil {
			return
		}
		wb, err1 := jsonrpc.EncodeMessage(want)
		gb, err2 := jsonrpc.EncodeMessage(got)
		if !bytes.Equal(wb, gb) || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: Decode gives %s (%v), DecodeMessage %s (%v)", line, gb, err2, wb, err1)
		}
	})
}

func TestDecodeCopies(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":"a","result":{"x":1}}`)
	m, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = ' '
	}
	if r := m.(*jsonrpc.Response); string(r.Result) != `{"x":1}` || r.ID.Raw() != "a" {
		t.Fatalf("the message shares the line's buffer: %+v", r)
	}
}

func BenchmarkDecode(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"ev_echo","arguments":{"text":"` + strings.Repeat("x", 64) + `"},"_meta":{"progressToken":"t"}}}`)
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonrpcwire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzDecodeBatch: DecodeBatch takes for a batch, and accepts, what the
// go-sdk's stdio connection does: an array (within the nesting limit) of
// at least one message, each as jsonrpc.DecodeMessage decodes it. The
// SDK's stream decoder hands it one JSON value: so does the fuzz.
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range []string{
		`[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"a","result":{}}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},1]`, `[1]`, `[null]`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{}`, `"x"`, `[[]]`,
		`[{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			t.Skip("the stream decoder hands on one JSON value") // what follows a value is not looked at
		}
		got, gotBatch, gerr := DecodeBatch(data)
		var want []jsonrpc.Message
		var wantBatch bool
		var werr error
		var raw []json.RawMessage
		if withinDepth(data, maxDepth) && json.Unmarshal(data, &raw) == nil {
			wantBatch = true
			if len(raw) == 0 {
				werr = errEmptyBatch
			}
			for _, r := range raw {
				m, err := jsonrpc.DecodeMessage(r)
				if err != nil {
					werr, want = err, nil
					break
				}
				want = append(want, m)
			}
		} else {
			m, err := jsonrpc.DecodeMessage(data)
			werr = err
			if err == nil {
				want = []jsonrpc.Message{m}
			}
		}
		if gotBatch != wantBatch || (gerr == nil) != (werr == nil) || len(got) != len(want) {
			t.Fatalf("%q: DecodeBatch %d messages, batch %v, error %v; want %d, %v, %v", data, len(got), gotBatch, gerr, len(want), wantBatch, werr)
		}
		for i := range got {
			gb, _ := jsonrpc.EncodeMessage(got[i])
			wb, _ := jsonrpc.EncodeMessage(want[i])
			if !bytes.Equal(gb, wb) {
				t.Fatalf("%q: message %d is %s, want %s", data, i, gb, wb)
			}
		}
	})
}
