package jsonrpcwire

import (
	"bytes"
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
