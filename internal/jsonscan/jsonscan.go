// Package jsonscan reads and writes JSON the way model-facing text needs:
// a scan that checks or skips a JSON value without decoding it, and a
// marshal that keeps "<", ">" and "&" as written.
package jsonscan

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping: what a model or a
// person reads keeps "<prefix>", "&&" and "<anonymous>" as written instead
// of \u003c, \u0026 and \u003e (this text never goes into HTML). RawMessage
// values inside v are copied unescaped too.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// MarshalIndent is Marshal with json.MarshalIndent's layout.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// IsObject reports whether raw, after leading blanks, starts a JSON
// object: a cheap shape test before a decode (it does not validate).
func IsObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// SkipValue returns the index just after the JSON value at raw[i] (for a
// number or literal: the separator or blank that ends it), or -1 when raw
// ends inside a string, object or array. raw must be valid JSON (checked
// or decoded beforehand): this only finds where values end, for scanners
// that read a document's top level without decoding it.
func SkipValue(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if i >= len(raw) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}
