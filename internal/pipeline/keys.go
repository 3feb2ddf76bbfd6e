package pipeline

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"io"
	"slices"
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
	// Most clients already send canonical JSON (the go-sdk marshals maps
	// with sorted keys): checking that is a scan without allocations,
	// where the decode and encode below cost a map per object and most of
	// the loop guard's time.
	if json.Valid(args) {
		if end, ok := canonicalValue(args, 0); ok && end == len(args) {
			return args
		}
		// Keys in another order (a model's client writes them as it likes):
		// sorted by rewriting, still without decoding into maps.
		if out, end, ok := appendSorted(make([]byte, 0, len(args)), args, 0); ok && end == len(args) {
			return out
		}
	}
	return canonicalSlow(args)
}

// canonicalSlow is CanonicalArgs by decoding and encoding again.
func canonicalSlow(args json.RawMessage) []byte {
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

// canonicalValue reports whether the valid JSON value at raw[i] is already
// in the form CanonicalArgs would write (no insignificant space, object
// keys in strictly increasing byte order, strings of printable ASCII that
// encoding/json writes as they are, numbers as written), and where it ends.
// Anything else (false) takes the decode and encode path.
func canonicalValue(raw []byte, i int) (int, bool) {
	if i >= len(raw) {
		return i, false
	}
	switch c := raw[i]; {
	case c == '{':
		i++
		if i < len(raw) && raw[i] == '}' {
			return i + 1, true
		}
		var prev []byte
		for first := true; ; first = false {
			if i >= len(raw) || raw[i] != '"' {
				return i, false
			}
			end, ok := canonicalString(raw, i)
			if !ok || (!first && string(raw[i+1:end-1]) <= string(prev)) {
				return i, false
			}
			prev, i = raw[i+1:end-1], end
			if i >= len(raw) || raw[i] != ':' {
				return i, false
			}
			if i, ok = canonicalValue(raw, i+1); !ok || i >= len(raw) {
				return i, false
			}
			switch raw[i] {
			case '}':
				return i + 1, true
			case ',':
				i++
			default:
				return i, false
			}
		}
	case c == '[':
		i++
		if i < len(raw) && raw[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = canonicalValue(raw, i); !ok || i >= len(raw) {
				return i, false
			}
			switch raw[i] {
			case ']':
				return i + 1, true
			case ',':
				i++
			default:
				return i, false
			}
		}
	case c == '"':
		return canonicalString(raw, i)
	case c == '-' || (c >= '0' && c <= '9'):
		for i < len(raw) && (raw[i] == '-' || raw[i] == '+' || raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E' || (raw[i] >= '0' && raw[i] <= '9')) {
			i++
		}
		return i, true // valid (json.Valid said so): json.Number writes it as is
	case c == 't' || c == 'n':
		return i + 4, true
	case c == 'f':
		return i + 5, true
	}
	return i, false
}

// canonicalString returns the end of the string at raw[i] when encoding/json
// would write its value back unchanged: printable ASCII other than the
// characters it escapes (", \, <, >, &).
func canonicalString(raw []byte, i int) (int, bool) {
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20 || c >= 0x7f || c == '\\' || c == '<' || c == '>' || c == '&':
			return j, false
		}
	}
	return len(raw), false
}

// appendSorted appends the valid JSON value at raw[i] with every object's
// members in key order, when that is all that keeps it from being canonical
// (canonicalValue): plain keys and strings, no space, no duplicate key.
// It returns the end of the value; ok is false for anything else.
func appendSorted(dst, raw []byte, i int) ([]byte, int, bool) {
	if i >= len(raw) {
		return dst, i, false
	}
	switch raw[i] {
	case '{':
		type member struct{ key, val []byte } // val: canonical, in its own buffer
		var ms []member
		i++
		if i < len(raw) && raw[i] == '}' {
			return append(dst, '{', '}'), i + 1, true
		}
		for {
			if i >= len(raw) || raw[i] != '"' {
				return dst, i, false
			}
			end, ok := canonicalString(raw, i)
			if !ok || end >= len(raw) || raw[end] != ':' {
				return dst, i, false
			}
			key := raw[i:end]
			var val []byte
			if val, i, ok = appendSorted(nil, raw, end+1); !ok || i >= len(raw) {
				return dst, i, false
			}
			ms = append(ms, member{key, val})
			if raw[i] == '}' {
				i++
				break
			}
			if raw[i] != ',' {
				return dst, i, false
			}
			i++
		}
		// By the keys' text, without the quotes (a quote sorts after a space).
		slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key[1:len(a.key)-1], b.key[1:len(b.key)-1]) })
		dst = append(dst, '{')
		for k, m := range ms {
			if k > 0 {
				if bytes.Equal(m.key, ms[k-1].key) {
					return dst, i, false // a duplicate key: decoding keeps the last one
				}
				dst = append(dst, ',')
			}
			dst = append(append(append(dst, m.key...), ':'), m.val...)
		}
		return append(dst, '}'), i, true
	case '[':
		dst = append(dst, '[')
		i++
		if i < len(raw) && raw[i] == ']' {
			return append(dst, ']'), i + 1, true
		}
		for {
			var ok bool
			if dst, i, ok = appendSorted(dst, raw, i); !ok || i >= len(raw) {
				return dst, i, false
			}
			switch raw[i] {
			case ']':
				return append(dst, ']'), i + 1, true
			case ',':
				dst = append(dst, ',')
				i++
			default:
				return dst, i, false
			}
		}
	}
	end, ok := canonicalValue(raw, i) // a scalar
	if !ok {
		return dst, i, false
	}
	return append(dst, raw[i:end]...), end, true
}
