package index

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"testing"
)

// paramsFromSchemaBefore is ParamsFromSchema as it was before its fast path
// (one decode per property), kept to check that both agree and to compare
// their cost side by side.
func paramsFromSchemaBefore(schema json.RawMessage) []Param {
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
				if v, ok := enumTextBefore(raw); ok && v != "" {
					p.Enum = append(p.Enum, v)
				}
			}
		}
		out = append(out, p)
	}
	return out
}
func enumTextBefore(raw json.RawMessage) (string, bool) {
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

func FuzzParamsFromSchemaAgrees(f *testing.F) {
	for _, s := range []string{
		`{"properties":{"a":{"description":"x","enum":["p","q\\u0041",1,true]},"b":true,"c":{"description":3}}}`,
		`{"properties":{"a":{"anyOf":[{"const":"x"},{"enum":["y"]}],"items":{"enum":["z"]}}}}`,
		`{"properties":{"a":{"const":"k","items":[1]},"b":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 512 {
			return
		}
		got, want := ParamsFromSchema(in), paramsFromSchemaBefore(in)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParamsFromSchema(%s) = %#v, before %#v", in, got, want)
		}
	})
}

// go test -run '^$' -bench ParamsFromSchema -benchmem ./internal/index/
func BenchmarkParamsFromSchema(b *testing.B) {
	schemas := make([]json.RawMessage, 1000)
	for i := range schemas {
		schemas[i] = json.RawMessage(fmt.Sprintf(`{"properties":{"id":{"description":"the file id %d","type":"string"},"limit":{"description":"at most this many","type":"integer"},"mode":{"enum":["fast","slow"],"type":"string"}},"required":["id"],"type":"object"}`, i))
	}
	b.Run("before", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				paramsFromSchemaBefore(s)
			}
		}
	})
	b.Run("now", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				ParamsFromSchema(s)
			}
		}
	})
}
