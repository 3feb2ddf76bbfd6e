package facade

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// decodeArgs parses a meta-tool's arguments strictly: unknown keys are an
// error, never silently ignored (a misspelt key must not fall back to a default).
func decodeArgs(raw json.RawMessage, via string, allowed ...string) (map[string]json.RawMessage, *toolerr.Error) {
	out := map[string]json.RawMessage{}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return out, nil
	}
	if err := json.Unmarshal(trimmed, &out); err != nil {
		return nil, toolerr.New(toolerr.InvalidArguments, "Pass a JSON object with the fields in this tool's input schema.",
			"arguments of %s must be a JSON object", via)
	}
	return allowedArgs(out, via, allowed...)
}

// allowedArgs is decodeArgs on arguments already decoded into out: an
// INVALID_ARGUMENTS naming the keys that are not allowed, else out.
func allowedArgs(out map[string]json.RawMessage, via string, allowed ...string) (map[string]json.RawMessage, *toolerr.Error) {
	var unknown []string
	for k := range out {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, toolerr.New(toolerr.InvalidArguments,
			fmt.Sprintf("%s accepts only: %s.", via, strings.Join(allowed, ", ")),
			"unknown argument(s) %s for %s", strings.Join(quoteAll(unknown), ", "), via).
			With("allowed", allowed)
	}
	return out, nil
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// field decodes one optional field into dst, naming the field on error.
func field(args map[string]json.RawMessage, name, via string, dst any) *toolerr.Error {
	raw, ok := args[name]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return toolerr.New(toolerr.InvalidArguments, "Check the type of this field against the tool's input schema.",
			"%s: field %q has the wrong type (%s)", via, name, jsonKind(raw))
	}
	return nil
}

func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "empty"
	}
	switch t[0] {
	case '{':
		return "got an object"
	case '[':
		return "got an array"
	case '"':
		return "got a string"
	case 't', 'f':
		return "got a boolean"
	case 'n':
		return "got null"
	}
	return "got a number"
}

// schemaSummary extracts required names and a compact name→type map from a
// JSON Schema, so a hit tells the model how to call without the full schema.
func schemaSummary(raw json.RawMessage) (required []string, params map[string]string) {
	var s struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil, nil
	}
	required = s.Required
	if required == nil {
		required = []string{}
	}
	params = make(map[string]string, len(s.Properties))
	for name, p := range s.Properties {
		t := "any"
		switch v := p.Type.(type) {
		case string:
			t = v
		case []any:
			parts := make([]string, 0, len(v))
			for _, x := range v {
				parts = append(parts, fmt.Sprint(x))
			}
			t = strings.Join(parts, "|")
		}
		if len(p.Enum) > 0 && len(p.Enum) <= 8 {
			vals := make([]string, len(p.Enum))
			for i, e := range p.Enum {
				b, _ := jsonscan.Marshal(e)
				vals[i] = string(b)
			}
			t = strings.Join(vals, "|")
		}
		params[name] = t
	}
	return required, params
}
