package catalog

import (
	"encoding/json"
	"testing"
)

func TestOverride(t *testing.T) {
	yes := true
	base := Tool{Name: "s", Description: "Search.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"repo":{"type":"string"},"q":{"type":"string"}},"required":["repo","q"],"additionalProperties":false}`)}
	o := Override{Description: "Search acme.", ReadOnly: &yes, Hide: []string{"repo"},
		Defaults: map[string]json.RawMessage{"repo": json.RawMessage(`"acme/web"`), "q": json.RawMessage(`"open"`)}}
	got := o.Apply(base)
	if got.Description != "Search acme." || !got.ReadOnly {
		t.Fatalf("%+v", got)
	}
	// repo is hidden; q's visible default is published and q is no longer required.
	if want := `{"additionalProperties":false,"properties":{"q":{"default":"open","type":"string"}},"type":"object"}`; string(got.InputSchema) != want {
		t.Fatalf("schema %s", got.InputSchema)
	}
	for _, tc := range []struct{ name, in, merged, filled string }{
		{"empty", ``, `{"q":"open"}`, `{"q":"open","repo":"acme/web"}`},
		{"null", `null`, `{"q":"open"}`, `{"q":"open","repo":"acme/web"}`},
		{"set wins", `{"q":"x"}`, `{"q":"x"}`, `{"q":"x","repo":"acme/web"}`},
		{"hidden is the operator's", `{"q":"x","repo":"evil"}`, `{"q":"x","repo":"evil"}`, `{"q":"x","repo":"acme/web"}`},
		{"not an object", `[1]`, `[1]`, `[1]`},
		{"not json", `{`, `{`, `{`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := got.MergeDefaults(json.RawMessage(tc.in))
			if string(m) != tc.merged {
				t.Fatalf("merged %s, want %s", m, tc.merged)
			}
			if f := got.FillHidden(m); string(f) != tc.filled {
				t.Fatalf("filled %s, want %s", f, tc.filled)
			}
		})
	}
	plain := Tool{Name: "p"}
	if a := plain.MergeDefaults(json.RawMessage(`{"a":1}`)); string(a) != `{"a":1}` {
		t.Fatal("a tool without override changed its arguments")
	}
	if s := reshape(json.RawMessage(`not json`), []string{"x"}, nil); string(s) != "not json" {
		t.Fatal("an unreadable schema was changed")
	}
	// A default for an argument the schema does not declare changes nothing;
	// a required argument without a default stays required.
	other := Override{Defaults: map[string]json.RawMessage{"nope": json.RawMessage(`1`)}}.Apply(base)
	if want := `{"additionalProperties":false,"properties":{"q":{"type":"string"},"repo":{"type":"string"}},"required":["repo","q"],"type":"object"}`; string(other.InputSchema) != want {
		t.Fatalf("schema %s", other.InputSchema)
	}
}
