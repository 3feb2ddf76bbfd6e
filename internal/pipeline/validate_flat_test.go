package pipeline

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var flatSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`,
	`{"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer"},"ratio":{"type":"number"},"all":{"type":"boolean"},"any":{}},"required":["id"],"additionalProperties":false}`,
	`{"type":"object","properties":{"a":true,"b":{"title":"B","default":3,"examples":[1,2]}},"required":["a","b","c"]}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{}}`,
}

func TestCompileFlat(t *testing.T) {
	for raw, want := range map[string]bool{
		flatSchemas[0]: true, flatSchemas[1]: true, flatSchemas[2]: true, flatSchemas[3]: true,
		`{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}`:  false,
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`:      false,
		`{"type":"object","properties":{"a":{"type":"object"}}}`:               false,
		`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`: false,
		`{"type":"object","properties":{"a":false}}`:                           false,
		`{"type":"object","additionalProperties":{"type":"string"}}`:           false,
		`{"type":"object","$defs":{},"properties":{"a":{"$ref":"#/$defs/x"}}}`: false,
		`{"type":"array"}`:                  false,
		`{"type":"object","required":"a"}`:  false,
		`{"type":"object","properties":[]}`: false,
		`not json`:                          false,
		`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`:        false,
		`{"type":"object","properties":{"a":{"type":"integer"}},"patternProperties":{}}`: false,
	} {
		if got := compileFlat(json.RawMessage(raw)) != nil; got != want {
			t.Errorf("compileFlat(%s) flat = %v, want %v", raw, got, want)
		}
	}
}

// TestFlatAccepts: the fast path says yes where it can (else it is no
// faster), and no wherever the validator might refuse or must judge.
func TestFlatAccepts(t *testing.T) {
	for _, tt := range []struct {
		schema int
		args   string
		want   bool
	}{
		{0, `{"text":"hi"}`, true},
		{0, ` { "text" : "h\"i\\" , "extra": [1,{"a":"}"}] } `, true},
		{0, `{"text":"é"}`, true},
		{0, `{}`, false},                      // missing required
		{0, `{"text":1}`, false},              // wrong type
		{0, `{"text":null}`, false},           // null: the validator words it
		{0, `{"text":"a","text":"b"}`, false}, // repeated key
		{0, `{"te\u0078t":"a"}`, false},       // escaped key
		{0, `{"text":"a"`, false},             // broken
		{0, `{"text":"a"} x`, false},
		{1, `{"id":"x","limit":3,"ratio":-1.5e3,"all":false,"any":{"deep":[null]}}`, true},
		{1, `{"id":"x","limit":3.0}`, false}, // an integer to JSON Schema, but the validator decides
		{1, `{"id":"x","limit":1e2}`, false},
		{1, `{"id":"x","other":1}`, false}, // additionalProperties: false
		{1, `{"id":"x","all":"true"}`, false},
		{1, `{"id":"x","limit":-12}`, true},
		{2, `{"a":null,"b":{},"c":[1]}`, true},
		{2, `{"a":1,"b":2}`, false},
		{3, `{}`, true},
		{3, `{"anything":[1,2,{"x":"]"}]}`, true},
	} {
		f := compileFlat(json.RawMessage(flatSchemas[tt.schema]))
		if got := f.accepts([]byte(tt.args)); got != tt.want {
			t.Errorf("schema %d, %s: accepts = %v, want %v", tt.schema, tt.args, got, tt.want)
		}
	}
}

// FuzzFlatAccepts holds the fast path to the validator: whatever it
// accepts, the full JSON Schema validation accepts too.
func FuzzFlatAccepts(f *testing.F) {
	for _, a := range []string{`{"text":"hi"}`, `{"id":"x","limit":3,"any":[{"a":1}]}`, `{"a":null,"b":{},"c":[1]}`, `{"id":"x","limit":3.0}`, `{}`} {
		for i := range flatSchemas {
			f.Add(uint8(i), []byte(a))
		}
	}
	var full []*jsonschema.Schema
	var flat []*flatSchema
	for _, s := range flatSchemas {
		c, err := compileSchema(json.RawMessage(s))
		if err != nil {
			f.Fatal(err)
		}
		full, flat = append(full, c), append(flat, compileFlat(json.RawMessage(s)))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		i := int(which) % len(flatSchemas)
		args = bytes.TrimSpace(args)
		if !flat[i].accepts(args) {
			return
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			t.Fatalf("schema %d accepted %q, which does not parse: %v", i, args, err)
		}
		if err := full[i].Validate(inst); err != nil {
			t.Fatalf("schema %d accepted %q, which the validator refuses: %v", i, args, err)
		}
	})
}

// BenchmarkValidateFlat: the validation stage for an echo tool's schema,
// the flat path and the validator, side by side.
func BenchmarkValidateFlat(b *testing.B) {
	schema := json.RawMessage(flatSchemas[0])
	args := []byte(`{"text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`)
	full, err := compileSchema(schema)
	if err != nil {
		b.Fatal(err)
	}
	flat := compileFlat(schema)
	b.Run("flat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !flat.accepts(args) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("validator", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
			if err != nil || full.Validate(inst) != nil {
				b.Fatal("refused")
			}
		}
	})
}
