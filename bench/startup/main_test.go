package main

import (
	"encoding/json"
	"testing"
)

// The fixture's raw schemas are byte for byte what json.Marshal wrote for
// the maps it used to give the go-sdk: the runtime is given the same list.
func TestFixtureSchemaIsTheMapsJSON(t *testing.T) {
	for _, w := range append(words, `quote"and\back`, "é") {
		want, err := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
			"id":    map[string]any{"type": "string", "description": "the " + w + " id"},
			"limit": map[string]any{"type": "integer", "description": "at most this many"},
		}, "required": []any{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		got := fixtureSchema(w)
		if string(got) != string(want) {
			t.Errorf("fixtureSchema(%q) = %s, want %s", w, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("fixtureSchema(%q) is not valid JSON", w)
		}
	}
}
