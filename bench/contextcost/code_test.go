package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

func TestExampleArgs(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"string"},"n":{"type":"integer"},"b":{"type":["boolean","null"]},"e":{"enum":["x","y"]},"l":{"type":"array"},"o":{"type":"object"},"opt":{"type":"string"}},"required":["a","n","b","e","l","o"]}`,
			`{"a":"example","b":true,"e":"x","l":[],"n":1,"o":{}}`},
		{`{"type":"object"}`, `{}`},
		{`not json`, `{}`},
		{`{"required":["ghost"]}`, `{"ghost":"example"}`},
	}
	for _, tc := range tests {
		b, _ := json.Marshal(exampleArgs(json.RawMessage(tc.schema)))
		if string(b) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.schema, b, tc.want)
		}
	}
}

func TestMultiTasks(t *testing.T) {
	multi := []datasetQuery{{Query: "a", Needs: [][]string{{"x"}}}, {Query: "b", Needs: [][]string{{"x"}, {"y"}}}}
	if got := multiTasks(multi); len(got) != 1 || got[0].Query != "b" {
		t.Fatalf("multi: %+v", got)
	}
	single := []datasetQuery{{Query: "a", Needs: [][]string{{"x"}}}, {Query: "b", Needs: [][]string{{"y"}}}, {Query: "c", Needs: [][]string{{"z"}}}}
	got := multiTasks(single)
	if len(got) != 1 || len(got[0].Needs) != 2 || !strings.Contains(got[0].Query, "Then: b") {
		t.Fatalf("paired: %+v", got)
	}
}

func TestScripts(t *testing.T) {
	steps := []catalog.Tool{{Canonical: "a_get", Description: "Get a thing. More.", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
		{Canonical: "b_put", Name: "put_it", InputSchema: json.RawMessage(`{}`)}}
	s := script(steps)
	if !strings.Contains(s, `tools.call("a_get", {"id":"example"})`) || !strings.Contains(s, `tools.call("b_put", {})`) {
		t.Fatalf("script: %s", s)
	}
	if f := findScript(steps); f != `return ["Get a thing","put it"].map(q => tools.search(q, {limit: 3}).map(t => t.signature));` {
		t.Fatalf("find script: %s", f)
	}
}
