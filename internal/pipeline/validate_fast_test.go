package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestTrivialSchema(t *testing.T) {
	for raw, want := range map[string]bool{
		``: true, `{}`: true, `{"type":"object"}`: true, `{"type":"object","properties":{},"description":"x"}`: true,
		`{"type":"object","required":["a"]}`: false, `{"type":"object","additionalProperties":false}`: false,
		`{"type":"object","properties":{"a":{"type":"string"}}}`: false, `{"type":"array"}`: false, `not json`: false,
	} {
		if got := trivialSchema(json.RawMessage(raw)); got != want {
			t.Errorf("trivialSchema(%s) = %v, want %v", raw, got, want)
		}
	}
}

// TestValidateParsesOnce: with the syntax check left to the one parse (or
// to json.Valid on the trivial path), malformed arguments are still refused.
func TestValidateParsesOnce(t *testing.T) {
	ran := 0
	h := Validate()(func(context.Context, *Request) *Response { ran++; return &Response{} })
	for _, tt := range []struct {
		schema, args string
		ok           bool
	}{
		{`{"type":"object"}`, `{"a":1}`, true},
		{`{"type":"object"}`, `{} x`, false},
		{`{"type":"object"}`, `{"a":`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"x"}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"x"} {}`, false},
	} {
		before := ran
		resp := h(context.Background(), &Request{Args: json.RawMessage(tt.args), Resolved: catalog.Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}})
		if got := ran > before; got != tt.ok {
			t.Errorf("%s with %s: ran = %v, want %v", tt.args, tt.schema, got, tt.ok)
		}
		if !tt.ok && (resp.Err == nil || resp.Err.Code != toolerr.InvalidArguments) {
			t.Errorf("%s with %s: %+v", tt.args, tt.schema, resp.Err)
		}
	}
}
