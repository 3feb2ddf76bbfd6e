package openapi

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxSchemaDepth bounds how deep a converted schema nests; deeper parts
// accept any value (an output schema of a real API can nest a dozen levels).
const maxSchemaDepth = 24

// converter turns OpenAPI schemas into self-contained JSON Schema (draft
// 2020-12) objects: every $ref is inlined, a cycle is cut with a note, allOf
// is merged where it can be, and OpenAPI 3.0's nullable and boolean
// exclusive bounds become their JSON Schema forms.
type converter struct {
	doc *openapi3.T
	// stack holds the component names being converted (for cycles).
	stack []string
	// memo holds converted components that met no cycle (shared maps,
	// never mutated after they are stored).
	memo map[memoKey]map[string]any
	// cut counts cycle cuts below the current component.
	cut int
	// input drops readOnly properties (request side); output drops writeOnly.
	input bool
}

type memoKey struct {
	name  string
	input bool
}

func newConverter(doc *openapi3.T) *converter {
	return &converter{doc: doc, memo: map[memoKey]map[string]any{}}
}

// refError is an unresolvable or unsupported $ref.
type refError struct{ ref, why string }

func (e *refError) Error() string { return fmt.Sprintf("$ref %q %s", e.ref, e.why) }

// componentName returns the name in "#/components/<kind>/<name>".
func componentName(ref, kind string) (string, error) {
	prefix := "#/components/" + kind + "/"
	if !strings.HasPrefix(ref, prefix) {
		if !strings.HasPrefix(ref, "#") {
			return "", &refError{ref, "is external (only references inside the document are followed)"}
		}
		return "", &refError{ref, "is not supported (want #/components/" + kind + "/<name>)"}
	}
	name := strings.NewReplacer("~1", "/", "~0", "~").Replace(ref[len(prefix):])
	if name == "" || strings.Contains(name, "/") {
		return "", &refError{ref, "is not supported (want #/components/" + kind + "/<name>)"}
	}
	return name, nil
}

func (c *converter) schemaRef(sr *openapi3.SchemaRef, depth int) (map[string]any, error) {
	if sr == nil {
		return map[string]any{}, nil
	}
	if sr.Ref == "" {
		if sr.Value == nil {
			return map[string]any{}, nil
		}
		return c.schema(sr.Value, depth)
	}
	name, err := componentName(sr.Ref, "schemas")
	if err != nil {
		return nil, err
	}
	if slices.Contains(c.stack, name) {
		c.cut++
		return map[string]any{"description": "(recursive " + name + "; not expanded here)"}, nil
	}
	key := memoKey{name, c.input}
	if m, ok := c.memo[key]; ok {
		return m, nil
	}
	var target *openapi3.SchemaRef
	if c.doc.Components != nil {
		target = c.doc.Components.Schemas[name]
	}
	if target == nil {
		return nil, &refError{sr.Ref, "does not resolve (no such schema in components)"}
	}
	if len(c.stack) > 64 {
		return nil, &refError{sr.Ref, "nests references too deeply"}
	}
	c.stack = append(c.stack, name)
	cutBefore := c.cut
	m, err := c.schemaRef(target, depth)
	c.stack = c.stack[:len(c.stack)-1]
	if err != nil {
		return nil, err
	}
	if c.cut == cutBefore { // nothing context-dependent below: reusable
		c.memo[key] = m
	}
	return m, nil
}

func (c *converter) schema(s *openapi3.Schema, depth int) (map[string]any, error) {
	if s.Always != nil {
		if *s.Always {
			return map[string]any{}, nil
		}
		return map[string]any{"not": map[string]any{}}, nil
	}
	if depth > maxSchemaDepth {
		c.cut++
		return map[string]any{"description": "(nested too deeply; not expanded here)"}, nil
	}
	out := map[string]any{}
	if s.Type != nil && len(*s.Type) > 0 {
		types := slices.Clone([]string(*s.Type))
		if s.Nullable && !slices.Contains(types, "null") {
			types = append(types, "null")
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = types
		}
	}
	setStr(out, "title", s.Title)
	setStr(out, "format", s.Format)
	setStr(out, "description", clipText(s.Description, 300))
	if len(s.Enum) > 0 {
		enum := slices.Clone(s.Enum)
		if s.Nullable && !slices.Contains(enum, any(nil)) {
			enum = append(enum, nil)
		}
		out["enum"] = enum
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	if s.Const != nil {
		out["const"] = s.Const
	}
	if s.Deprecated {
		out["deprecated"] = true
	}
	// Numbers: 3.0 writes exclusive bounds as booleans beside min/max.
	numBound(out, "minimum", "exclusiveMinimum", s.Min, s.ExclusiveMin)
	numBound(out, "maximum", "exclusiveMaximum", s.Max, s.ExclusiveMax)
	if s.MultipleOf != nil {
		out["multipleOf"] = *s.MultipleOf
	}
	if s.MinLength > 0 {
		out["minLength"] = s.MinLength
	}
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	if s.Pattern != "" && validRegexp(s.Pattern) {
		out["pattern"] = s.Pattern // a pattern Go cannot compile is dropped: the backend still checks it
	}
	if s.MinItems > 0 {
		out["minItems"] = s.MinItems
	}
	if s.MaxItems != nil {
		out["maxItems"] = *s.MaxItems
	}
	if s.UniqueItems {
		out["uniqueItems"] = true
	}
	if s.MinProps > 0 {
		out["minProperties"] = s.MinProps
	}
	if s.MaxProps != nil {
		out["maxProperties"] = *s.MaxProps
	}
	var err error
	sub := func(key string, sr *openapi3.SchemaRef) {
		if err != nil || sr == nil {
			return
		}
		var m map[string]any
		if m, err = c.schemaRef(sr, depth+1); err == nil {
			out[key] = m
		}
	}
	list := func(key string, refs openapi3.SchemaRefs) []any {
		if err != nil || len(refs) == 0 {
			return nil
		}
		l := make([]any, 0, len(refs))
		for _, r := range refs {
			m, e := c.schemaRef(r, depth+1)
			if e != nil {
				err = e
				return nil
			}
			l = append(l, m)
		}
		out[key] = l
		return l
	}
	sub("items", s.Items)
	sub("not", s.Not)
	sub("contains", s.Contains)
	sub("propertyNames", s.PropertyNames)
	list("prefixItems", s.PrefixItems)
	list("oneOf", s.OneOf)
	list("anyOf", s.AnyOf)
	if err != nil {
		return nil, err
	}
	if len(s.Properties) > 0 {
		props := make(map[string]any, len(s.Properties))
		for _, name := range sortedKeys(s.Properties) {
			sr := s.Properties[name]
			if sr != nil && sr.Value != nil && sr.Ref == "" && (c.input && sr.Value.ReadOnly || !c.input && sr.Value.WriteOnly) {
				continue
			}
			m, err := c.schemaRef(sr, depth+1)
			if err != nil {
				return nil, err
			}
			props[name] = m
		}
		out["properties"] = props
	}
	if len(s.Required) > 0 {
		var req []string
		props, _ := out["properties"].(map[string]any)
		for _, r := range s.Required {
			if _, dropped := s.Properties[r]; dropped && props[r] == nil {
				continue // a readOnly property is not required of the caller
			}
			req = append(req, r)
		}
		if len(req) > 0 {
			out["required"] = req
		}
	}
	if len(s.PatternProperties) > 0 {
		pp := map[string]any{}
		for _, k := range sortedKeys(s.PatternProperties) {
			if !validRegexp(k) {
				continue
			}
			m, err := c.schemaRef(s.PatternProperties[k], depth+1)
			if err != nil {
				return nil, err
			}
			pp[k] = m
		}
		out["patternProperties"] = pp
	}
	if ap := s.AdditionalProperties; ap.Has != nil && !*ap.Has {
		out["additionalProperties"] = false
	} else if ap.Schema != nil {
		m, err := c.schemaRef(ap.Schema, depth+1)
		if err != nil {
			return nil, err
		}
		out["additionalProperties"] = m
	}
	if len(s.AllOf) > 0 {
		parts := list("allOf", s.AllOf)
		if err != nil {
			return nil, err
		}
		if merged, ok := mergeAllOf(out, parts); ok {
			out = merged
		}
	}
	return out, nil
}

// mergeAllOf folds the parts of an allOf into one schema when their
// keywords do not conflict (the common "base object + extra fields" shape);
// otherwise it leaves allOf as it is.
func mergeAllOf(base map[string]any, parts []any) (map[string]any, bool) {
	out := maps.Clone(base)
	delete(out, "allOf")
	for _, p := range parts {
		part := p.(map[string]any)
		for k, v := range part {
			cur, has := out[k]
			switch {
			case !has:
				out[k] = v
			case k == "description" || k == "title":
				// the outer (or first) text wins
			case k == "properties":
				props := maps.Clone(cur.(map[string]any))
				for name, ps := range v.(map[string]any) {
					if old, dup := props[name]; dup && !reflect.DeepEqual(old, ps) {
						props[name] = map[string]any{"allOf": []any{old, ps}}
					} else {
						props[name] = ps
					}
				}
				out[k] = props
			case k == "required":
				req := slices.Clone(cur.([]string))
				for _, r := range v.([]string) {
					if !slices.Contains(req, r) {
						req = append(req, r)
					}
				}
				out[k] = req
			case reflect.DeepEqual(cur, v):
			default:
				return nil, false
			}
		}
	}
	return out, true
}

func numBound(out map[string]any, inclKey, exclKey string, v *float64, ex openapi3.ExclusiveBound) {
	switch {
	case ex.Value != nil: // 3.1: the bound itself
		out[exclKey] = *ex.Value
		if v != nil {
			out[inclKey] = *v
		}
	case ex.IsTrue() && v != nil: // 3.0: a flag on minimum/maximum
		out[exclKey] = *v
	case v != nil:
		out[inclKey] = *v
	}
}

// validRegexp reports whether the validator (Go's regexp) compiles p.
func validRegexp(p string) bool {
	_, err := regexp.Compile(p)
	return err == nil
}

func setStr(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// clipText keeps the first n runes of s, on a word boundary when it can.
func clipText(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexAny(cut, " \n"); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + "…"
}
