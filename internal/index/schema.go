package index

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
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
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil || len(top.Properties) == 0 {
		return nil
	}
	names := make([]string, 0, len(top.Properties))
	for n := range top.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Param, 0, len(names))
	for _, n := range names {
		p := Param{Name: n}
		var prop struct {
			Description json.RawMessage   `json:"description"`
			Enum        []json.RawMessage `json:"enum"`
			Const       json.RawMessage   `json:"const"`
			AnyOf       []json.RawMessage `json:"anyOf"`
			OneOf       []json.RawMessage `json:"oneOf"`
			Items       *struct {
				Enum []json.RawMessage `json:"enum"`
			} `json:"items"`
		}
		if err := json.Unmarshal(top.Properties[n], &prop); err == nil {
			var d string
			if json.Unmarshal(prop.Description, &d) == nil {
				p.Description = d
			}
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
