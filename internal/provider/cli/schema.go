package cli

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/agent-tools/agent-tools/internal/provider/cli/argv"
)

// noLeadingDash is the pattern of a string that may not start with "-":
// values that would begin an argument before any "--" (see package argv).
// The runtime refuses them anyway; the schema says so up front, so that a
// bad call fails validation before anyone is asked to confirm it.
const noLeadingDash = "^(?:[^-]|$)"

// inputSchema builds a tool's JSON Schema from its declared parameters.
func inputSchema(decl map[string]Param, params map[string]argv.Param, sensitive map[string]bool) (json.RawMessage, error) {
	props := make(map[string]any, len(decl))
	var required []string
	for name, d := range decl {
		p := params[name]
		s := map[string]any{"type": d.Type}
		if d.Description != "" {
			s["description"] = d.Description
		}
		if len(d.Enum) > 0 {
			s["enum"] = d.Enum
		}
		if p.Default != nil {
			s["default"] = p.Default
		}
		guard := func(s map[string]any, typ string) {
			switch typ {
			case "string":
				s["pattern"] = noLeadingDash
			case "integer", "number":
				s["minimum"] = 0
			}
		}
		if d.Type == "array" {
			items := map[string]any{"type": p.Items}
			if sensitive[name] {
				guard(items, p.Items)
			}
			s["items"] = items
		} else if sensitive[name] {
			guard(s, d.Type)
		}
		props[name] = s
		if d.Required {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(schema); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}
