package index

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParamsFromSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []Param
	}{
		{"nil", ``, nil},
		{"not json", `{"type":`, nil},
		{"array", `[1,2]`, nil},
		{"string", `"object"`, nil},
		{"null", `null`, nil},
		{"no properties", `{"type":"object"}`, nil},
		{"properties not an object", `{"properties": [1]}`, nil},
		{"empty properties", `{"properties": {}}`, nil},
		{"basic, sorted by name", `{"type":"object","properties":{
			"repo":{"type":"string","description":"Repository name"},
			"owner":{"type":"string","description":"Owner"}}}`,
			[]Param{{Name: "owner", Description: "Owner"}, {Name: "repo", Description: "Repository name"}}},
		{"enum of strings, numbers, bools; others skipped", `{"properties":{"state":{"enum":["open","closed",3,true,null,{"x":1}]}}}`,
			[]Param{{Name: "state", Enum: []string{"open", "closed", "3", "true"}}}},
		{"items enum", `{"properties":{"labels":{"type":"array","items":{"enum":["bug","docs"]}}}}`,
			[]Param{{Name: "labels", Enum: []string{"bug", "docs"}}}},
		{"anyOf consts", `{"properties":{"cat":{"anyOf":[{"const":"world","description":"x"},{"const":"uk"},{"type":"string"}]}}}`,
			[]Param{{Name: "cat", Enum: []string{"world", "uk"}}}},
		{"malformed property keeps its name", `{"properties":{"a":"oops","b":{"description":42}}}`,
			[]Param{{Name: "a"}, {Name: "b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ParamsFromSchema(json.RawMessage(tc.schema))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParamsFromSchema(%s) = %#v, want %#v", tc.schema, got, tc.want)
			}
		})
	}
}

func TestParamsFromSchemaBoundsEnums(t *testing.T) {
	vals := make([]int, 500)
	for i := range vals {
		vals[i] = i
	}
	b, _ := json.Marshal(map[string]any{"properties": map[string]any{"n": map[string]any{"enum": vals}}})
	ps := ParamsFromSchema(b)
	if len(ps) != 1 || len(ps[0].Enum) != maxEnumValues {
		t.Fatalf("enum not bounded: %d values", len(ps[0].Enum))
	}
}

func FuzzParamsFromSchema(f *testing.F) {
	f.Add([]byte(`{"properties":{"a":{"enum":["x"]}}}`))
	f.Add([]byte(`{"properties":{"a":{"anyOf":[{"const":1}]}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = ParamsFromSchema(b)
	})
}
