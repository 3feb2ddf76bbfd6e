package console

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
)

// maxFormDepth bounds how deep the try-a-call form nests fieldsets for
// objects and arrays; deeper values are typed as JSON, which stays usable
// for any shape while keeping the page readable.
const maxFormDepth = 4

// Field is one input of the try-a-call form, generated from the tool's
// JSON Schema: a scalar input, a fieldset for an object with properties,
// or a list of items (Item, cloned by "Add item") for an array.
type Field struct {
	Name        string // the property name ("" for an array's item)
	Path        string // where it sits, for ids and messages: "extra.a", "tags[]"
	ID          string // the input's element id ("" inside an array's item template: ids must be unique)
	Input       string // text | number | integer | boolean | enum | json | object | array
	Type        string // the schema's type, shown next to the name
	Required    bool
	Description string
	Enum        []string // enum values as JSON texts (Input "enum")
	EnumLabels  []string
	Default     string
	Fields      []Field `json:",omitempty"` // Input "object": its properties
	Item        *Field  `json:",omitempty"` // Input "array": the item
}

// propSchema is the part of a property's schema the form reads.
type propSchema struct {
	Type        any                        `json:"type"`
	Enum        []json.RawMessage          `json:"enum"`
	Const       json.RawMessage            `json:"const"`
	Description string                     `json:"description"`
	Default     json.RawMessage            `json:"default"`
	Properties  map[string]json.RawMessage `json:"properties"`
	Required    []string                   `json:"required"`
	Items       json.RawMessage            `json:"items"`
	// Combinators and references have no one form: such a value is JSON.
	Ref   string            `json:"$ref"`
	OneOf []json.RawMessage `json:"oneOf"`
	AnyOf []json.RawMessage `json:"anyOf"`
	AllOf []json.RawMessage `json:"allOf"`
}

// formFields reads the schema's top-level properties: scalars get typed
// inputs, enums a select, objects with properties a nested fieldset, arrays
// of a known item a list of items, and anything else a JSON textarea.
// Required fields come first, then the rest by name.
func formFields(schema json.RawMessage) []Field {
	var s propSchema
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	return objectFields(s, "", false, 0)
}

func objectFields(s propSchema, prefix string, inArray bool, depth int) []Field {
	var out []Field
	for name, raw := range s.Properties {
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		f := field(raw, name, path, inArray, depth)
		f.Required = slices.Contains(s.Required, name)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Field) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// field builds one input from a property's schema.
func field(raw json.RawMessage, name, path string, inArray bool, depth int) Field {
	var p propSchema
	_ = json.Unmarshal(raw, &p) // a schema that is not an object (true, junk): a JSON textarea
	f := Field{Name: name, Path: path, Description: summary(p.Description), Type: typeName(p.Type)}
	if !inArray {
		f.ID = "arg-" + path
	}
	combined := p.Ref != "" || len(p.OneOf) > 0 || len(p.AnyOf) > 0 || len(p.AllOf) > 0
	switch {
	case len(p.Enum) > 0 || len(p.Const) > 0:
		f.Input = "enum"
		values := p.Enum
		if len(values) == 0 {
			values = []json.RawMessage{p.Const}
		}
		for _, e := range values {
			f.Enum = append(f.Enum, string(e))
			var str string
			if json.Unmarshal(e, &str) == nil {
				f.EnumLabels = append(f.EnumLabels, str)
			} else {
				f.EnumLabels = append(f.EnumLabels, string(e))
			}
		}
	case combined:
		f.Input = "json"
	case f.Type == "string":
		f.Input = "text"
	case f.Type == "number", f.Type == "integer", f.Type == "boolean":
		f.Input = f.Type
	case f.Type == "object" && len(p.Properties) > 0 && depth < maxFormDepth:
		f.Input = "object"
		f.Fields = objectFields(p, path, inArray, depth+1)
	case f.Type == "array" && depth < maxFormDepth && jsonscan.IsObject(p.Items) /* one item schema; the tuple form, a list, has no one item */ :
		item := field(p.Items, "", path+"[]", true, depth+1)
		if item.Input == "json" {
			f.Input = "json" // an array of anything: typing the JSON array is simpler than a list of JSON boxes
			break
		}
		f.Input = "array"
		if item.Type != "" {
			f.Type = "array of " + item.Type
		}
		f.Item = &item
	default:
		f.Input = "json"
	}
	if len(p.Default) > 0 && f.Input != "object" && f.Input != "array" {
		f.Default = string(p.Default)
		var str string
		if f.Input == "text" && json.Unmarshal(p.Default, &str) == nil {
			f.Default = str
		}
	}
	return f
}

// typeName is a schema "type" as one word: a list like ["string","null"]
// keeps its first non-null entry.
func typeName(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}
