package redact

import (
	"encoding/json"
	"reflect"
)

// Any returns v with every secret scrubbed from the strings inside it.
// Strings, []string, []any and map[string]any (and nestings of them) are
// walked; any other value is encoded to JSON, scrubbed, and, only when a
// secret was found, replaced by the decoded generic value (so an unaffected
// value keeps its type).
func (s *Set) Any(v any) any {
	if s.n.Load() == 0 || v == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		return s.String(x)
	case []string:
		out := make([]string, len(x))
		for i := range x {
			out[i] = s.String(x[i])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = s.Any(x[i])
		}
		return out
	case map[string]any:
		return s.Map(x)
	case bool, int, int64, float64, json.Number:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	c := s.Bytes(b)
	if &c[0] == &b[0] {
		return v
	}
	var out any
	if json.Unmarshal(c, &out) != nil {
		return v
	}
	return out
}

// Map scrubs the values of m (keys are the runtime's own names) into a new map.
func (s *Set) Map(m map[string]any) map[string]any {
	if m == nil || s.n.Load() == 0 {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = s.Any(v)
	}
	return out
}

// JSONInto scrubs the JSON encoding of *p and, when a secret was found,
// decodes the scrubbed text back into a fresh value of the same type. It is
// how typed protocol results are scrubbed without knowing their fields.
func (s *Set) JSONInto(v any) any {
	if s.n.Load() == 0 || v == nil {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) == 0 {
		return v
	}
	c := s.Bytes(b)
	if &c[0] == &b[0] {
		return v
	}
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Pointer {
		return v
	}
	fresh := reflect.New(t.Elem())
	if json.Unmarshal(c, fresh.Interface()) != nil {
		return v
	}
	return fresh.Interface()
}
