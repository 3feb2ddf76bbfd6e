package pins

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
)

// The file is the store's own, written whole and atomically: its pins are
// checked for their shape here, and a definition that turns out not to be
// JSON when decoded is an empty one (every field then shows as changed).
//
// A warm start with 10,000 pinned tools read the whole pins file into
// Records, every definition and schema decoded, to compare 10,000 digests
// (it was most of the start-up's own cost). parseFast reads only what the
// comparison needs of each pin (tool, provider, digest and the flags) and
// keeps the pin's JSON: its definition is decoded when it is needed (a
// change, a listing) and written back as it was read. A pin with a change
// or findings is decoded at once (there are few). Anything parseFast does
// not expect sends the file to Parse, which says what is wrong with it.

// parseFast is Parse for the store's own file.
func parseFast(data []byte) (approvals uint64, recs []Record, err error) {
	ok := true
	version := -1
	var pinsRaw []byte
	wellFormed := members(data, func(k string, v []byte) {
		switch k {
		case "version":
			n, err := strconv.Atoi(string(v))
			if err != nil {
				ok = false
			}
			version = n
		case "approvals":
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				ok = false
			}
			approvals = n
		case "pins":
			pinsRaw = v
		default:
			ok = false
		}
	})
	if !ok || !wellFormed || version != 1 || len(pinsRaw) < 2 || pinsRaw[0] != '[' || pinsRaw[len(pinsRaw)-1] != ']' {
		return Parse(data)
	}
	// Records are large: room for all of them at once (an estimate; a
	// schema's own "provider" key only makes it larger).
	recs = make([]Record, 0, bytes.Count(pinsRaw, []byte(`"provider":`))+1)
	i := 1
	for {
		i = skipBlank(pinsRaw, i)
		if i >= len(pinsRaw) || pinsRaw[i] == ']' {
			break
		}
		if pinsRaw[i] == ',' {
			i++
			continue
		}
		end := jsonscan.SkipValue(pinsRaw, i)
		if end <= i || pinsRaw[i] != '{' || pinsRaw[end-1] != '}' {
			return Parse(data)
		}
		raw := pinsRaw[i:end]
		i = end
		r, full := head(raw)
		if full || r.Tool == "" || r.Provider == "" || r.Digest == "" {
			if err := json.Unmarshal(raw, &r); err != nil {
				return Parse(data)
			}
			if r.Tool == "" || r.Provider == "" || r.Digest == "" && r.Changed == nil {
				return Parse(data) // which names the pin
			}
		} else {
			r.raw = raw // shares the file's bytes, read once
		}
		if full {
			r.raw = nil
		}
		recs = append(recs, r)
	}
	return approvals, recs, nil
}

// head reads a pin's plain fields; full is set when the pin needs a full
// decode (a change, findings, an escape in a string, an unknown member).
func head(raw []byte) (r Record, full bool) {
	full = !members(raw, func(k string, v []byte) {
		str := func() string {
			if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
				full = true
				return ""
			}
			return string(v[1 : len(v)-1])
		}
		switch k {
		case "tool":
			r.Tool = str()
		case "provider":
			r.Provider = str()
		case "digest":
			r.Digest = str()
		case "scanned":
			r.Scanned = str()
		case "new":
			r.New = string(v) == "true"
		case "approved":
			r.Approved = string(v) == "true"
		case "fields":
			r.Fields, _ = strconv.Atoi(string(v))
		case "time", "definition": // decoded with the rest by full
		case "changed", "findings":
			full = full || string(v) != "null"
		default:
			full = true
		}
	}) || full
	return r, full
}

// members calls f with each member of the JSON object raw and reports
// whether raw was one (as far as a scan of its top level tells).
func members(raw []byte, f func(k string, v []byte)) bool {
	i := skipBlank(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i++
	for first := true; ; first = false {
		i = skipBlank(raw, i)
		if i >= len(raw) {
			return false
		}
		if raw[i] == '}' {
			return skipBlank(raw, i+1) == len(raw)
		}
		if !first {
			if raw[i] != ',' {
				return false
			}
			i = skipBlank(raw, i+1)
		}
		kEnd := jsonscan.SkipValue(raw, i)
		if i >= len(raw) || raw[i] != '"' || kEnd < i+2 || raw[kEnd-1] != '"' {
			return false
		}
		k := raw[i:kEnd]
		var key string
		if bytes.IndexByte(k, '\\') >= 0 {
			if json.Unmarshal(k, &key) != nil {
				return false
			}
			key = "\x00" + key // an escaped key: never one of ours as is
		} else {
			key = string(k[1 : len(k)-1])
		}
		i = skipBlank(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipBlank(raw, i+1)
		end := jsonscan.SkipValue(raw, i)
		if end <= i {
			return false
		}
		f(key, raw[i:end])
		i = end
	}
}

func skipBlank(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// full decodes a pin read by parseFast (a no-op for one already decoded).
func (r *Record) full() {
	if r.raw == nil {
		return
	}
	raw := r.raw
	r.raw = nil
	var d struct {
		Def  json.RawMessage `json:"definition"`
		Time time.Time       `json:"time"`
	}
	if err := json.Unmarshal(raw, &d); err == nil {
		r.Time = d.Time
		if len(d.Def) > 0 {
			_ = json.Unmarshal(d.Def, &r.Def)
		}
	}
}

// encode is the pin's JSON: as it was read when it was not decoded since.
func (r *Record) encode() ([]byte, error) {
	if r.raw != nil {
		return r.raw, nil
	}
	return json.Marshal(r)
}
