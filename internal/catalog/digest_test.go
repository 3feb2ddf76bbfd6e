package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

func slowDigest(d Definition) string {
	b, err := json.Marshal(d)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// digestFast writes what json.Marshal writes, or gives up.
func TestDigestFastIsJSONMarshal(t *testing.T) {
	for _, d := range []Definition{
		{Name: "a", Description: "plain"},
		{Name: "a<b>&", Title: "t\u2028x\u2029", Description: "q\"\\\n\t\x01 \xff é 😀", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"description":"a b \"c\" é"}}}`)},
		{Name: "a", InputSchema: json.RawMessage(`{"type": "object"}`)},
		{Name: "a", InputSchema: json.RawMessage(`{"d":"<b>"}`)},
		{Name: "a", ReadOnly: true, AlwaysConfirm: true, OutputSchema: json.RawMessage(`{"type":"object"}`), Icons: json.RawMessage(`[{"src":"x"}]`), Meta: json.RawMessage(`{"k":1}`)},
	} {
		if got, want := d.Digest(), slowDigest(d); got != want {
			t.Errorf("%+v: %s, want %s", d, got, want)
		}
	}
}

func FuzzDigestFast(f *testing.F) {
	f.Add("n", "d", `{"type":"object"}`)
	f.Add("<", "\u2028\xff", `{"a":"b c"}`)
	f.Fuzz(func(t *testing.T, name, desc, schema string) {
		d := Definition{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
		if !json.Valid(d.InputSchema) {
			return
		}
		if got, want := d.Digest(), slowDigest(d); got != want {
			t.Fatalf("%q %q %q: %s, want %s", name, desc, schema, got, want)
		}
	})
}
