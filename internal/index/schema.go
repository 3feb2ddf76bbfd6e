package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// maxEnumValues bounds how many enum values of one parameter are kept as
// evidence; huge enums (country lists, ...) would drown the other fields.
const maxEnumValues = 64

// ParamsFromSchema extracts the top-level properties of a JSON Schema object:
// name, description and enum values (strings; numbers and booleans are
// rendered as text). Properties are returned sorted by name. It is tolerant of
// garbage: anything that is not an object schema with an object "properties"
// yields nil, and malformed individual properties are skipped or kept with
// the name alone.
func ParamsFromSchema(schema json.RawMessage) []Param {
	if len(schema) == 0 {
		return nil
	}
	// One decode of the whole schema when every property is well formed
	// (the common case: a tenth of a 10,000-tool warm start went to
	// decoding each property separately); anything else takes the
	// tolerant path, property by property, with the same result.
	var fast struct {
		Properties map[string]*propSchema `json:"properties"`
	}
	if err := json.Unmarshal(schema, &fast); err == nil {
		return params(fast.Properties)
	}
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil
	}
	props := make(map[string]*propSchema, len(top.Properties))
	for n, raw := range top.Properties {
		var prop struct {
			Description json.RawMessage `json:"description"`
			propSchema
		}
		if err := json.Unmarshal(raw, &prop); err != nil {
			props[n] = nil // kept with the name alone
			continue
		}
		var d string
		if json.Unmarshal(prop.Description, &d) == nil {
			prop.propSchema.Description = d
		}
		props[n] = &prop.propSchema
	}
	return params(props)
}

// propSchema is what ParamsFromSchema reads of one property.
type propSchema struct {
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Const       json.RawMessage   `json:"const"`
	AnyOf       []json.RawMessage `json:"anyOf"`
	OneOf       []json.RawMessage `json:"oneOf"`
	Items       *struct {
		Enum []json.RawMessage `json:"enum"`
	} `json:"items"`
}

// params turns decoded properties (nil: malformed, name only) into Params
// sorted by name.
func params(props map[string]*propSchema) []Param {
	if len(props) == 0 {
		return nil
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Param, 0, len(names))
	for _, n := range names {
		p := Param{Name: n}
		if prop := props[n]; prop != nil {
			p.Description = prop.Description
			enum := prop.Enum
			if len(enum) == 0 && prop.Items != nil {
				enum = prop.Items.Enum
			}
			if len(enum) == 0 && len(prop.Const) > 0 {
				enum = []json.RawMessage{prop.Const}
			}
			// Union of constants ({"anyOf": [{"const": "a"}, ...]}), as
			// schema generators emit for enums with per-value docs.
			for _, alt := range append(prop.AnyOf, prop.OneOf...) {
				var a struct {
					Const json.RawMessage   `json:"const"`
					Enum  []json.RawMessage `json:"enum"`
				}
				if json.Unmarshal(alt, &a) == nil {
					if len(a.Const) > 0 {
						enum = append(enum, a.Const)
					}
					enum = append(enum, a.Enum...)
				}
			}
			for _, raw := range enum {
				if len(p.Enum) >= maxEnumValues {
					break
				}
				if v, ok := enumText(raw); ok && v != "" {
					p.Enum = append(p.Enum, v)
				}
			}
		}
		out = append(out, p)
	}
	return out
}

func enumText(raw json.RawMessage) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && !bytes.ContainsAny(raw[1:n-1], "\\\"") && utf8.Valid(raw) {
		return string(raw[1 : n-1]), true // a plain string: no escapes to decode
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return fmt.Sprint(x), true
	}
	return "", false
}
