package console

import (
	"encoding/json"
	"testing"
)

func TestFormFields(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []Field
	}{
		{"malformed", `{"properties":`, nil},
		{"not an object", `[1,2]`, nil},
		{"no properties", `{"type":"object"}`, nil},
		{"required first, then by name", `{"required":["z"],"properties":{"a":{"type":"boolean"},"z":{"type":"string","default":"hi"}}}`,
			[]Field{{Name: "z", Path: "z", ID: "arg-z", Input: "text", Type: "string", Required: true, Default: "hi"}, {Name: "a", Path: "a", ID: "arg-a", Input: "boolean", Type: "boolean"}}},
		{"enum of numbers", `{"properties":{"n":{"type":"integer","enum":[1,2]}}}`,
			[]Field{{Name: "n", Path: "n", ID: "arg-n", Input: "enum", Type: "integer", Enum: []string{"1", "2"}, EnumLabels: []string{"1", "2"}}}},
		{"const is a one-value enum", `{"properties":{"k":{"const":"only"}}}`,
			[]Field{{Name: "k", Path: "k", ID: "arg-k", Input: "enum", Enum: []string{`"only"`}, EnumLabels: []string{"only"}}}},
		{"nullable type list", `{"properties":{"s":{"type":["null","number"]}}}`,
			[]Field{{Name: "s", Path: "s", ID: "arg-s", Input: "number", Type: "number"}}},
		{"free-form object, untyped array, untyped value: JSON", `{"properties":{"o":{"type":"object"},"l":{"type":"array"},"x":true}}`,
			[]Field{{Name: "l", Path: "l", ID: "arg-l", Input: "json", Type: "array"}, {Name: "o", Path: "o", ID: "arg-o", Input: "json", Type: "object"}, {Name: "x", Path: "x", ID: "arg-x", Input: "json"}}},
		{"combinators and references: JSON", `{"properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"oneOf":[{}]},"r":{"$ref":"#/$defs/x"}}}`,
			[]Field{{Name: "a", Path: "a", ID: "arg-a", Input: "json", Type: "object"}, {Name: "r", Path: "r", ID: "arg-r", Input: "json"}}},
		{"nested object: a fieldset with its own required fields", `{"properties":{"o":{"type":"object","required":["b"],"properties":{"a":{"type":"integer"},"b":{"type":"string"}}}}}`,
			[]Field{{Name: "o", Path: "o", ID: "arg-o", Input: "object", Type: "object", Fields: []Field{
				{Name: "b", Path: "o.b", ID: "arg-o.b", Input: "text", Type: "string", Required: true},
				{Name: "a", Path: "o.a", ID: "arg-o.a", Input: "integer", Type: "integer"}}}}},
		{"array of scalars: a list of items without ids", `{"required":["t"],"properties":{"t":{"type":"array","items":{"type":"string","enum":["x","y"]}}}}`,
			[]Field{{Name: "t", Path: "t", ID: "arg-t", Input: "array", Type: "array of string", Required: true,
				Item: &Field{Path: "t[]", Input: "enum", Type: "string", Enum: []string{`"x"`, `"y"`}, EnumLabels: []string{"x", "y"}}}}},
		{"array of objects", `{"properties":{"s":{"type":"array","items":{"type":"object","properties":{"c":{"type":"string"}}}}}}`,
			[]Field{{Name: "s", Path: "s", ID: "arg-s", Input: "array", Type: "array of object",
				Item: &Field{Path: "s[]", Input: "object", Type: "object", Fields: []Field{{Name: "c", Path: "s[].c", Input: "text", Type: "string"}}}}}},
		{"array of anything, tuple arrays: JSON", `{"properties":{"a":{"type":"array","items":{}},"t":{"type":"array","items":[{"type":"string"}]}}}`,
			[]Field{{Name: "a", Path: "a", ID: "arg-a", Input: "json", Type: "array"}, {Name: "t", Path: "t", ID: "arg-t", Input: "json", Type: "array"}}},
		{"depth is bounded: deeper values are JSON", `{"properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"object","properties":{"d":{"type":"object","properties":{"e":{"type":"object","properties":{"f":{"type":"string"}}}}}}}}}}}}}`,
			[]Field{{Name: "a", Path: "a", ID: "arg-a", Input: "object", Type: "object", Fields: []Field{
				{Name: "b", Path: "a.b", ID: "arg-a.b", Input: "object", Type: "object", Fields: []Field{
					{Name: "c", Path: "a.b.c", ID: "arg-a.b.c", Input: "object", Type: "object", Fields: []Field{
						{Name: "d", Path: "a.b.c.d", ID: "arg-a.b.c.d", Input: "object", Type: "object", Fields: []Field{
							{Name: "e", Path: "a.b.c.d.e", ID: "arg-a.b.c.d.e", Input: "json", Type: "object"}}}}}}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := formFields(json.RawMessage(tc.schema))
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tc.want)
			if string(g) != string(w) {
				t.Fatalf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func FuzzFormFields(f *testing.F) {
	for _, s := range []string{`{}`, `{"properties":{"a":{"type":"string","enum":["x"]}}}`, `{"required":[1],"properties":{"b":{"type":[1]}}}`, `{"properties":[]}`, `{"properties":{"o":{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}}}}}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		var check func(fs []Field, depth int)
		check = func(fs []Field, depth int) {
			if depth > maxFormDepth+1 {
				t.Fatalf("nested %d deep", depth)
			}
			for _, fl := range fs {
				if fl.Input == "" || len(fl.Enum) != len(fl.EnumLabels) || (fl.Input == "array") != (fl.Item != nil) {
					t.Fatalf("field %+v", fl)
				}
				check(fl.Fields, depth+1)
				if fl.Item != nil {
					check([]Field{*fl.Item}, depth+1)
				}
			}
		}
		check(formFields(b), 0)
	})
}
