package pipeline

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
)

// flatSchema is an input schema simple enough to check without the JSON
// Schema validator: an object whose declared properties constrain nothing
// but their JSON type (string, integer, number, boolean, or anything), with
// required names and additionalProperties true or false. Most tools'
// schemas are like this, and the validator's own decode of the arguments
// was most of the validation stage's cost.
//
// accepts only ever says yes: whatever it is unsure of (a null, a nested
// value, 1.0 for an integer, an escaped or repeated key, too many members)
// goes to the full validator, which decides and writes the teaching errors.
// So the fast path can change how fast a call is accepted, never whether.
type flatSchema struct {
	props    map[string]jsonKind
	required map[string]int // name → bit in the seen mask
	closed   bool           // additionalProperties: false
}

type jsonKind uint8

const (
	kindAny jsonKind = iota
	kindString
	kindInteger
	kindNumber
	kindBoolean
)

// maxFlatMembers bounds the members accepts looks at (and so the required
// names it can track in one 64-bit mask); larger objects take the full path.
const maxFlatMembers = 64

// annotation keywords: they describe, they do not constrain.
var annotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "examples": true,
	"default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// compileFlat returns the flat form of raw, or nil when raw is not flat.
func compileFlat(raw json.RawMessage) *flatSchema {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	f := &flatSchema{props: map[string]jsonKind{}, required: map[string]int{}}
	for k, v := range top {
		switch {
		case k == "type":
			if string(bytes.TrimSpace(v)) != `"object"` {
				return nil
			}
		case k == "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) != nil || props == nil {
				return nil
			}
			for name, ps := range props {
				kind, ok := flatProperty(ps)
				if !ok {
					return nil
				}
				f.props[name] = kind
			}
		case k == "required":
			var names []string
			if json.Unmarshal(v, &names) != nil {
				return nil
			}
			for _, n := range names {
				if _, dup := f.required[n]; !dup {
					f.required[n] = len(f.required)
				}
			}
		case k == "additionalProperties":
			switch string(bytes.TrimSpace(v)) {
			case "true":
			case "false":
				f.closed = true
			default:
				return nil
			}
		case k == "$schema" || annotations[k]:
		default:
			return nil // $ref, $defs, patternProperties, min/max…, anything else
		}
	}
	if len(f.required) > maxFlatMembers {
		return nil
	}
	return f
}

// flatProperty reads one property's schema: only a single "type" among
// the kinds accepts can judge, and annotations.
func flatProperty(raw json.RawMessage) (jsonKind, bool) {
	if string(bytes.TrimSpace(raw)) == "true" {
		return kindAny, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return 0, false
	}
	kind := kindAny
	for k, v := range m {
		switch {
		case k == "type":
			switch string(bytes.TrimSpace(v)) {
			case `"string"`:
				kind = kindString
			case `"integer"`:
				kind = kindInteger
			case `"number"`:
				kind = kindNumber
			case `"boolean"`:
				kind = kindBoolean
			default:
				return 0, false // objects, arrays, null, a list of types
			}
		case annotations[k]:
		default:
			return 0, false // enum, format, minLength, items…
		}
	}
	return kind, true
}

// accepts reports whether args (a JSON object, whose syntax is checked
// here) certainly satisfies the schema. False means "ask the validator".
func (f *flatSchema) accepts(args []byte) bool {
	if !json.Valid(args) {
		return false
	}
	i := skipSpace(args, 0)
	if i >= len(args) || args[i] != '{' {
		return false
	}
	var seen [maxFlatMembers][]byte
	var got uint64
	n := 0
	i = skipSpace(args, i+1)
	if i < len(args) && args[i] == '}' {
		return len(f.required) == 0
	}
	for {
		// A key: plain ASCII without escapes, so its bytes are its name.
		end := i + 1
		for end < len(args) && args[end] != '"' {
			if c := args[end]; c == '\\' || c >= utf8.RuneSelf {
				return false
			}
			end++
		}
		key := args[i+1 : end]
		if n == maxFlatMembers {
			return false
		}
		for _, s := range seen[:n] {
			if bytes.Equal(s, key) {
				return false // a repeated key: the validator sees the last one
			}
		}
		seen[n] = key
		n++
		i = skipSpace(args, end+1) // at ':'
		i = skipSpace(args, i+1)   // at the value
		kind, declared := f.props[string(key)]
		if !declared && f.closed {
			return false
		}
		next, ok := valueOfKind(args, i, kind)
		if !ok {
			return false
		}
		if bit, req := f.required[string(key)]; req {
			got |= 1 << bit
		}
		i = skipSpace(args, next)
		if args[i] == '}' {
			break
		}
		i = skipSpace(args, i+1) // past ','
	}
	return got == 1<<len(f.required)-1
}

// valueOfKind checks the valid JSON value at args[i] against kind and
// returns where it ends. Nested values are only skipped, and only kindAny
// takes them, as null (a typed property refuses null: the validator words that).
func valueOfKind(args []byte, i int, kind jsonKind) (int, bool) {
	c := args[i]
	switch {
	case c == '"':
		return jsonscan.SkipValue(args, i), kind == kindAny || kind == kindString
	case c == 't' || c == 'f':
		end := i + 4
		if c == 'f' {
			end++
		}
		return end, kind == kindAny || kind == kindBoolean
	case c == '-' || (c >= '0' && c <= '9'):
		end, whole := i, true
		for end < len(args) {
			d := args[end]
			if d == '.' || d == 'e' || d == 'E' {
				whole = false // 1.0 is an integer to JSON Schema: the validator decides
			} else if d != '-' && d != '+' && (d < '0' || d > '9') {
				break
			}
			end++
		}
		return end, kind == kindAny || kind == kindNumber || (kind == kindInteger && whole)
	case c == 'n':
		return i + 4, kind == kindAny
	case (c == '{' || c == '[') && kind == kindAny:
		return jsonscan.SkipValue(args, i), true
	}
	return i, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
