package transport

import (
	"bytes"
	"encoding/json"
)

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
