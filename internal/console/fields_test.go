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
			[]Field{{Name: "z", Input: "text", Type: "string", Required: true, Default: "hi"}, {Name: "a", Input: "boolean", Type: "boolean"}}},
		{"enum of numbers", `{"properties":{"n":{"type":"integer","enum":[1,2]}}}`,
			[]Field{{Name: "n", Input: "enum", Type: "integer", Enum: []string{"1", "2"}, EnumLabels: []string{"1", "2"}}}},
		{"nullable type list", `{"properties":{"s":{"type":["null","number"]}}}`,
			[]Field{{Name: "s", Input: "number", Type: "number"}}},
		{"nested and untyped become JSON", `{"properties":{"o":{"type":"object"},"l":{"type":"array"},"x":true}}`,
			[]Field{{Name: "l", Input: "json", Type: "array"}, {Name: "o", Input: "json", Type: "object"}, {Name: "x", Input: "json"}}},
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
	for _, s := range []string{`{}`, `{"properties":{"a":{"type":"string","enum":["x"]}}}`, `{"required":[1],"properties":{"b":{"type":[1]}}}`, `{"properties":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		for _, fl := range formFields(b) {
			if fl.Input == "" || len(fl.Enum) != len(fl.EnumLabels) {
				t.Fatalf("field %+v", fl)
			}
		}
	})
}
