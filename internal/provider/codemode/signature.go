package codemode

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Signature bounds: a signature is read by a model on every search hit, so a
// huge schema is summarised rather than spelled out.
const (
	sigMaxDepth = 4    // nested objects past this render as `object`
	sigMaxProps = 40   // properties past this render as `[more: string]: any`
	sigMaxEnum  = 12   // enum members past this render as the base type
	sigMaxLen   = 1200 // characters; past this the argument type is cut to `object`
)

// Signature renders a tool as a TypeScript-style declaration generated from
// its JSON Schemas, so a model writes a correct call the first time:
//
//	gh_list_issues(args: {repo: string, state?: "open" | "closed", limit?: number}): Promise<any>
//
// Required properties lose the `?`; enums and consts become literal unions;
// arrays, nested objects (to a depth of 4), anyOf/oneOf and type lists are
// spelled out; anything it cannot read ($ref, a malformed schema) is `any`.
// The result is the output schema's type when the tool declares one.
func Signature(name string, input, output json.RawMessage) string {
	args := "{}"
	if s, ok := parseSchema(input); ok {
		args = tsType(s, 0)
		if len(args) > sigMaxLen {
			args = "object"
		}
	}
	result := "any"
	if s, ok := parseSchema(output); ok {
		if r := tsType(s, 0); len(r) <= sigMaxLen {
			result = r
		}
	}
	return name + "(args: " + args + "): Promise<" + result + ">"
}

func parseSchema(raw json.RawMessage) (map[string]any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var s map[string]any
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return nil, false
	}
	return s, true
}

// tsType is the TypeScript type of schema s (a decoded JSON Schema object,
// or a boolean schema).
func tsType(v any, depth int) string {
	switch s := v.(type) {
	case bool:
		if s {
			return "any"
		}
		return "never"
	case map[string]any:
		return objType(s, depth)
	}
	return "any"
}

func objType(s map[string]any, depth int) string {
	if c, ok := s["const"]; ok {
		return literal(c)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 && len(e) <= sigMaxEnum {
		parts := make([]string, 0, len(e))
		for _, m := range e {
			parts = append(parts, literal(m))
		}
		return union(parts)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			if depth >= sigMaxDepth {
				return "any"
			}
			parts := make([]string, 0, len(alts))
			for _, a := range alts {
				parts = append(parts, tsType(a, depth+1))
			}
			return union(parts)
		}
	}
	switch t := s["type"].(type) {
	case string:
		return typeName(t, s, depth)
	case []any:
		var parts []string
		for _, x := range t {
			if n, ok := x.(string); ok {
				parts = append(parts, typeName(n, s, depth))
			}
		}
		if len(parts) > 0 {
			return union(parts)
		}
	}
	if _, ok := s["properties"].(map[string]any); ok {
		return typeName("object", s, depth)
	}
	return "any"
}

func typeName(t string, s map[string]any, depth int) string {
	switch t {
	case "string":
		return "string"
	case "integer", "number":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		if depth >= sigMaxDepth {
			return "any[]"
		}
		item := "any"
		if it, ok := s["items"]; ok {
			item = tsType(it, depth+1)
		}
		if strings.ContainsAny(item, "|&") {
			item = "(" + item + ")"
		}
		return item + "[]"
	case "object":
		return objectType(s, depth)
	}
	return "any"
}

var identRe = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func objectType(s map[string]any, depth int) string {
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		if ap, ok := s["additionalProperties"]; ok && ap != false {
			return "{[key: string]: " + tsType(ap, depth+1) + "}"
		}
		return "object"
	}
	if depth >= sigMaxDepth {
		return "object"
	}
	required := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, x := range r {
			if n, ok := x.(string); ok {
				required[n] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	// Required first (a model fills those first), then by name.
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i == sigMaxProps {
			b.WriteString(", [more: string]: any")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if identRe.MatchString(n) {
			b.WriteString(n)
		} else {
			b.WriteString(strconv.Quote(n))
		}
		if !required[n] {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		b.WriteString(tsType(props[n], depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "any"
	}
	if len(b) > 80 {
		return "any"
	}
	return string(b)
}

func union(parts []string) string {
	seen := map[string]bool{}
	out := parts[:0:0]
	for _, p := range parts {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return strings.Join(out, " | ")
}
