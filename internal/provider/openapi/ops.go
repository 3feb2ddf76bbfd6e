package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// maxOutputSchema bounds a published output schema; a larger one (a whole
// nested object graph) is left out rather than bloat every listing.
const maxOutputSchema = 32 << 10

// operation is one tool: how its arguments map onto an HTTP request.
type operation struct {
	tool   catalog.Tool
	method string
	path   string // the template, "/repos/{owner}/{repo}"
	params []param
	// body: how the request body is built from the arguments.
	bodyKind  string            // "" (none), "json" or "form"
	bodyMedia string            // the media type sent
	bodyWhole string            // argument holding a non-object body ("body")
	bodyField map[string]string // argument name → body field (object bodies)
}

// param is one path, query, header or cookie parameter.
type param struct {
	name, arg, in string // arg: the argument name (the parameter's name)
	explode       bool
	style         string
}

var methods = []string{http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodTrace}

// selection decides which operations become tools and which are read-only.
type selection struct {
	include, exclude, readonly []string
	// authHeaders are header names the host sets; parameters with these
	// names never reach a schema.
	authHeaders []string
}

func matchAny(pats []string, name string, tags []string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
		for _, t := range tags {
			if ok, _ := path.Match(p, t); ok {
				return true
			}
		}
	}
	return false
}

// buildOperations turns every selected operation of doc into a tool.
// Problems with one operation skip that operation and are returned as
// diagnostics.
func buildOperations(id string, doc *openapi3.T, sel selection) (map[string]*operation, []catalog.Tool, []provider.Diagnostic) {
	ops := map[string]*operation{}
	where := map[string]string{}
	var tools []catalog.Tool
	var diags []provider.Diagnostic
	skip := func(item, format string, args ...any) {
		diags = append(diags, provider.Diagnostic{Provider: id, Item: item, Status: "skipped", Reason: fmt.Sprintf(format, args...)})
	}
	if doc.Paths == nil {
		return ops, nil, nil
	}
	conv := newConverter(doc)
	for _, p := range sortedKeys(doc.Paths.Map()) {
		item := doc.Paths.Value(p)
		if item == nil {
			continue
		}
		if item.Ref != "" {
			skip(p, "path item $ref %q is not supported", item.Ref)
			continue
		}
		if dotSegments(p) {
			// The document must not steer a request (with the credentials)
			// out from under the base URL.
			skip(p, `path has a "." or ".." segment (plain or percent-encoded): it could leave the base URL`)
			continue
		}
		for _, m := range methods {
			op := item.GetOperation(m)
			if op == nil {
				continue
			}
			name := op.OperationID
			if name == "" {
				name = fallbackName(m, p)
			}
			loc := m + " " + p
			if len(sel.include) > 0 && !matchAny(sel.include, name, op.Tags) || matchAny(sel.exclude, name, op.Tags) {
				continue
			}
			if first, dup := where[name]; dup {
				skip(loc, "duplicate tool name %q (already used by %s); give one of them another operationId", name, first)
				continue
			}
			o, err := buildOperation(conv, m, p, item.Parameters, op, sel)
			if err != nil {
				skip(loc, "%s: %v", name, err)
				continue
			}
			o.tool.Provider, o.tool.Name = id, name
			o.tool.ReadOnly = m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions || matchAny(sel.readonly, name, op.Tags)
			where[name] = loc
			ops[name] = o
			tools = append(tools, o.tool)
		}
	}
	return ops, tools, diags
}

// fallbackName names an operation without an operationId: the lower-case
// method and the path, non-alphanumeric runs as "_" ("get_users_id").
func fallbackName(method, p string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	sep := true
	for _, r := range p {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			if sep {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
		} else {
			sep = true
		}
	}
	return b.String()
}

func buildOperation(conv *converter, method, p string, shared openapi3.Parameters, op *openapi3.Operation, sel selection) (*operation, error) {
	o := &operation{method: method, path: p}
	props := map[string]any{}
	var required []string
	// Operation parameters override path-level ones with the same name and location.
	type key struct{ name, in string }
	var list []*openapi3.Parameter
	index := map[key]int{}
	for _, group := range []openapi3.Parameters{shared, op.Parameters} {
		for _, pr := range group {
			prm, err := resolveParam(conv.doc, pr)
			if err != nil {
				return nil, err
			}
			k := key{prm.Name, prm.In}
			if i, ok := index[k]; ok {
				list[i] = prm
				continue
			}
			index[k] = len(list)
			list = append(list, prm)
		}
	}
	conv.input = true
	for _, prm := range list {
		if prm.Name == "" {
			return nil, fmt.Errorf("a parameter has no name")
		}
		switch prm.In {
		case "path", "query", "header", "cookie":
		default:
			return nil, fmt.Errorf("parameter %q is in %q (want path, query, header or cookie)", prm.Name, prm.In)
		}
		if prm.In == "header" && slices.ContainsFunc(append([]string{"Authorization", "Proxy-Authorization"}, sel.authHeaders...), func(h string) bool { return strings.EqualFold(h, prm.Name) }) {
			continue // the host sets it; a credential is never an argument
		}
		if _, clash := props[prm.Name]; clash {
			return nil, fmt.Errorf("two parameters are named %q (in different places); rename one in the document", prm.Name)
		}
		sr := prm.Schema
		if sr == nil {
			for _, mt := range prm.Content {
				sr = mt.Schema
				break
			}
		}
		s, err := conv.schemaRef(sr, 1)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", prm.Name, err)
		}
		if prm.Description != "" {
			s = withDescription(s, clipText(prm.Description, 300))
		}
		props[prm.Name] = s
		if prm.In == "path" || prm.Required {
			required = append(required, prm.Name)
		}
		explode := prm.Style == "" || prm.Style == "form"
		if prm.Explode != nil {
			explode = *prm.Explode
		}
		o.params = append(o.params, param{name: prm.Name, arg: prm.Name, in: prm.In, explode: explode, style: prm.Style})
	}
	for _, seg := range strings.Split(p, "/") {
		for seg != "" {
			i := strings.IndexByte(seg, '{')
			j := strings.IndexByte(seg, '}')
			if i < 0 || j < i {
				break
			}
			name := seg[i+1 : j]
			if !slices.ContainsFunc(o.params, func(pr param) bool { return pr.in == "path" && pr.name == name }) {
				return nil, fmt.Errorf("path parameter {%s} is not declared", name)
			}
			seg = seg[j+1:]
		}
	}
	if err := o.addBody(conv, op.RequestBody, props, &required); err != nil {
		return nil, err
	}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	var err error
	if o.tool.InputSchema, err = json.Marshal(schema); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	o.tool.Description = describe(method, p, op)
	conv.input = false
	o.tool.OutputSchema = outputSchema(conv, op)
	return o, nil
}

func withDescription(s map[string]any, d string) map[string]any {
	if _, has := s["description"]; has {
		return s
	}
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	out["description"] = d
	return out
}

func resolveParam(doc *openapi3.T, pr *openapi3.ParameterRef) (*openapi3.Parameter, error) {
	for range 8 {
		if pr == nil {
			return nil, fmt.Errorf("empty parameter")
		}
		if pr.Ref == "" {
			if pr.Value == nil {
				return nil, fmt.Errorf("empty parameter")
			}
			return pr.Value, nil
		}
		name, err := componentName(pr.Ref, "parameters")
		if err != nil {
			return nil, err
		}
		var next *openapi3.ParameterRef
		if doc.Components != nil {
			next = doc.Components.Parameters[name]
		}
		if next == nil {
			return nil, &refError{pr.Ref, "does not resolve (no such parameter in components)"}
		}
		pr = next
	}
	return nil, &refError{pr.Ref, "is a cycle of references"}
}

func resolveBody(doc *openapi3.T, rb *openapi3.RequestBodyRef) (*openapi3.RequestBody, error) {
	for range 8 {
		if rb == nil || rb.Ref == "" {
			if rb == nil || rb.Value == nil {
				return nil, nil
			}
			return rb.Value, nil
		}
		name, err := componentName(rb.Ref, "requestBodies")
		if err != nil {
			return nil, err
		}
		var next *openapi3.RequestBodyRef
		if doc.Components != nil {
			next = doc.Components.RequestBodies[name]
		}
		if next == nil {
			return nil, &refError{rb.Ref, "does not resolve (no such request body in components)"}
		}
		rb = next
	}
	return nil, &refError{rb.Ref, "is a cycle of references"}
}

func resolveResponse(doc *openapi3.T, rr *openapi3.ResponseRef) (*openapi3.Response, error) {
	for range 8 {
		if rr == nil || rr.Ref == "" {
			if rr == nil || rr.Value == nil {
				return nil, nil
			}
			return rr.Value, nil
		}
		name, err := componentName(rr.Ref, "responses")
		if err != nil {
			return nil, err
		}
		var next *openapi3.ResponseRef
		if doc.Components != nil {
			next = doc.Components.Responses[name]
		}
		if next == nil {
			return nil, &refError{rr.Ref, "does not resolve (no such response in components)"}
		}
		rr = next
	}
	return nil, &refError{rr.Ref, "is a cycle of references"}
}

// isJSON reports whether a media type is JSON ("application/json",
// "application/vnd.github+json", "application/json; charset=utf-8").
func isJSON(media string) bool {
	media, _, _ = strings.Cut(strings.ToLower(media), ";")
	media = strings.TrimSpace(media)
	return media == "application/json" || strings.HasSuffix(media, "+json") || media == "*/*"
}

// addBody merges the request body into the input schema. An object body's
// properties sit beside the parameters; a field whose name a parameter
// already has is renamed "body_<name>" (then "body_body_<name>"...), so
// nothing is lost. Any other body (an array, a string) is the argument
// "body" (renamed the same way on a clash).
func (o *operation) addBody(conv *converter, rb *openapi3.RequestBodyRef, props map[string]any, required *[]string) error {
	body, err := resolveBody(conv.doc, rb)
	if err != nil || body == nil || len(body.Content) == 0 {
		return err
	}
	var media string
	var mt *openapi3.MediaType
	for _, m := range sortedKeys(body.Content) {
		if isJSON(m) && m != "*/*" {
			media, mt, o.bodyKind = m, body.Content[m], "json"
			break
		}
	}
	if mt == nil {
		for _, m := range sortedKeys(body.Content) {
			switch {
			case strings.HasPrefix(m, "application/x-www-form-urlencoded"):
				media, mt, o.bodyKind = m, body.Content[m], "form"
			case m == "*/*":
				media, mt, o.bodyKind = "application/json", body.Content[m], "json"
			}
		}
	}
	if mt == nil {
		if !body.Required {
			return nil // an optional body we cannot send: the operation still works without it
		}
		return fmt.Errorf("request body media types %s are not supported (want JSON or form-encoded)", strings.Join(sortedKeys(body.Content), ", "))
	}
	o.bodyMedia = media
	s, err := conv.schemaRef(mt.Schema, 1)
	if err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	bp, isObject := s["properties"].(map[string]any)
	if t, _ := s["type"].(string); isObject && (t == "object" || t == "") && s["oneOf"] == nil && s["anyOf"] == nil {
		o.bodyField = map[string]string{}
		req, _ := s["required"].([]string)
		for _, field := range sortedKeys(bp) {
			arg := field
			for props[arg] != nil {
				arg = "body_" + arg
			}
			props[arg] = bp[field]
			o.bodyField[arg] = field
			if body.Required && slices.Contains(req, field) {
				*required = append(*required, arg)
			}
		}
		return nil
	}
	if o.bodyKind == "form" {
		return fmt.Errorf("form-encoded request body is not an object")
	}
	arg := "body"
	for props[arg] != nil {
		arg = "body_" + arg
	}
	props[arg] = withDescription(s, "The request body.")
	o.bodyWhole = arg
	if body.Required {
		*required = append(*required, arg)
	}
	return nil
}

// describe is what the model reads: the summary, then the description
// clipped, and the HTTP line for orientation.
func describe(method, p string, op *openapi3.Operation) string {
	var parts []string
	if s := strings.TrimSpace(op.Summary); s != "" {
		parts = append(parts, clipText(s, 200))
	}
	if d := strings.TrimSpace(op.Description); d != "" && d != strings.TrimSpace(op.Summary) {
		first, _, _ := strings.Cut(d, "\n\n")
		parts = append(parts, clipText(first, 400))
	}
	if op.Deprecated {
		parts = append(parts, "Deprecated.")
	}
	parts = append(parts, "("+method+" "+p+")")
	return strings.Join(parts, " ")
}

// outputSchema describes structuredContent for the first 2xx JSON response:
// an object schema as it is, anything else under "result" (structured
// content is always an object).
func outputSchema(conv *converter, op *openapi3.Operation) json.RawMessage {
	if op.Responses == nil {
		return nil
	}
	codes := sortedKeys(op.Responses.Map())
	for _, code := range codes {
		if len(code) != 3 || code[0] != '2' {
			continue
		}
		resp, err := resolveResponse(conv.doc, op.Responses.Value(code))
		if err != nil || resp == nil {
			return nil
		}
		for _, m := range sortedKeys(resp.Content) {
			if !isJSON(m) || resp.Content[m].Schema == nil {
				continue
			}
			s, err := conv.schemaRef(resp.Content[m].Schema, 1)
			if err != nil {
				return nil
			}
			if t, _ := s["type"].(string); t != "object" {
				s = map[string]any{"type": "object", "properties": map[string]any{"result": s}, "required": []string{"result"}}
			}
			b, err := json.Marshal(s)
			if err != nil || len(b) > maxOutputSchema {
				return nil
			}
			return b
		}
		return nil
	}
	return nil
}
