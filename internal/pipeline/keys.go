package pipeline

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"io"
)

// CallKey identifies "this exact call by this caller" for the loop guard and
// confirmation tokens: the caller's identity and session, the tool as named,
// and a canonical hash of the arguments — parsed, keys sorted, compact — so
// that a retry re-serialised differently (spaces, key order, a stripped
// confirmation argument) is still the same call. It never depends on memory
// addresses, so it means the same thing on every request of a stateless
// server and on every replica.
func CallKey(req *Request) string {
	h := sha256.New()
	for _, s := range []string{req.Identity, req.Session, req.Via, req.Provider, req.Tool} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	h.Write(CanonicalArgs(req.Args))
	return string(h.Sum(nil))
}

// CanonicalArgs returns args in canonical form: parsed with exact numbers,
// object keys sorted, no insignificant space. Unparsable input is returned
// as is (it is then its own identity).
func CanonicalArgs(args json.RawMessage) []byte {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return args
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return args
	}
	return out
}

func newRequestID() string { return rand.Text()[:16] }
