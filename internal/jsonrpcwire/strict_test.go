package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestDecodeStrict(t *testing.T) {
	for _, tt := range []struct {
		msg    string
		id     string // the refusal's id, JSON; "" = accepted
		reason string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","id":-0,"method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","id":100e-2,"method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","id":0.0,"method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","id":"1.5e308","method":"ping"}`, "", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", ""},
		{`{"jsonrpc":"2.0","method":"n","params":{"ID":1}}`, "", ""},
		{`{"jsonrpc":"2.0","method":"n","params":"ID"}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1.5e308,"method":"ping"}`, "null", "out of range"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "null", "not a whole number"},
		{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, "null", "not a whole number"},
		{`{"jsonrpc":"2.0","id":5e-1,"method":"ping"}`, "null", "not a whole number"},
		{`{"jsonrpc":"2.0","id":1e-400,"method":"ping"}`, "null", "not a whole number"},
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, "null", "out of range"},
		{`{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}`, "null", "out of range"},
		{`{"jsonrpc":"2.0","id":1,"Method":"ping"}`, "1", `"Method" is not "method"`},
		{`{"jsonrpc":"2.0","id":"a","mEthod":"ping","params":{}}`, `"a"`, `"mEthod" is not "method"`},
		{`{"jsonrpc":"2.0","id":1}`, "1", `no "method"`},
		{`{"jsonrpc":"2.0","id":1,"params":{"Method":1}}`, "1", `no "method"`},
		{`{"jsonrpc":"2.0","ID":2,"method":"ping"}`, "2", `"ID" is not "id"`},
		{`{"jsonrpc":"2.0","Id":1.5,"method":"ping"}`, "null", `"Id" is not "id"`},
	} {
		m, err := DecodeStrict([]byte(tt.msg))
		var inv *Invalid
		switch {
		case tt.id == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.msg, err)
		case tt.id == "":
			want, _ := Decode([]byte(tt.msg))
			gb, _ := jsonrpc.EncodeMessage(m)
			wb, _ := jsonrpc.EncodeMessage(want)
			if !bytes.Equal(gb, wb) {
				t.Errorf("%s: %s, Decode gives %s", tt.msg, gb, wb)
			}
		case !errors.As(err, &inv):
			t.Errorf("%s: %v (%v), want an Invalid", tt.msg, m, err)
		default:
			id, _ := json.Marshal(inv.ID.Raw())
			if string(id) != tt.id || !strings.Contains(inv.Error(), tt.reason) {
				t.Errorf("%s: refused with id %s, %q; want %s, %q", tt.msg, id, inv.Error(), tt.id, tt.reason)
			}
		}
	}
}

// FuzzDecodeStrict: DecodeStrict accepts only what Decode accepts, and
// the same; a numeric id it accepts is the one written, exactly (the
// SDK's answer carries the same number).
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.5e308,"method":"m"}`, `{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}`, `{"jsonrpc":"2.0","id":1e2,"method":"m"}`, `{"jsonrpc":"2.0","id":-0.0e5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"m"}`, `{"jsonrpc":"2.0","ID":1,"method":"m"}`, `{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":123456789012345678e-2,"method":"m"}`, `{"jsonrpc":"2.0","id":1E+15,"method":"m"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeStrict(data)
		want, werr := Decode(data)
		if err == nil && werr != nil {
			t.Fatalf("%q: DecodeStrict accepts what Decode refuses (%v)", data, werr)
		}
		var inv *Invalid
		if err != nil && werr == nil && !errors.As(err, &inv) {
			t.Fatalf("%q: Decode accepts, DecodeStrict refuses with %v, not an Invalid", data, err)
		}
		if err != nil {
			return
		}
		gb, _ := jsonrpc.EncodeMessage(got)
		wb, _ := jsonrpc.EncodeMessage(want)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("%q: %s, Decode gives %s", data, gb, wb)
		}
		var w struct {
			ID json.RawMessage `json:"id"`
		}
		if unmarshal(data, &w) != nil || len(w.ID) == 0 {
			return
		}
		lit := string(w.ID)
		if i := strings.IndexAny(lit, "eE"); len(lit) > 64 || (i >= 0 && len(lit)-i > 5) {
			return // too long to check cheaply (big.Rat would spell out 10^exponent)
		}
		written, ok := new(big.Rat).SetString(lit)
		if !ok {
			return // not a number
		}
		var out struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(gb, &out); err != nil {
			t.Fatalf("%s: %v", gb, err)
		}
		answered, _ := new(big.Rat).SetString(out.ID.String())
		if answered == nil || answered.Cmp(written) != 0 {
			t.Fatalf("%q: the id %s is answered as %s", data, w.ID, out.ID)
		}
	})
}
