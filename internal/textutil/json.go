package textutil

import (
	"bytes"
	"encoding/json"
)

// MarshalJSON is json.Marshal without HTML escaping: what a model or a
// person reads keeps "<prefix>", "&&" and "<anonymous>" as written instead
// of \u003c, \u0026 and \u003e (this text never goes into HTML). RawMessage
// values inside v are copied unescaped too.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// MarshalJSONIndent is MarshalJSON with json.MarshalIndent's layout.
func MarshalJSONIndent(v any, prefix, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
