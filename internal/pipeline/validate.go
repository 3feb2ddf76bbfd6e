package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// schemaCache compiles each distinct schema once; tools re-listed with the
// same schema bytes reuse the compiled form.
type schemaCache struct {
	mu sync.RWMutex // calls only read: no global exclusive lock on the call path
	m  map[[32]byte]compiled
}

type compiled struct {
	schema *jsonschema.Schema
	err    error
	// trivial schemas accept any object ({}, {"type":"object"}, no
	// properties or constraints): valid JSON is all there is to check.
	trivial bool
	// flat schemas are checked on the arguments' bytes first (validate_flat.go).
	flat *flatSchema
}

// maxCachedSchemas bounds the cache; past it the cache starts over (schemas
// are cheap to recompile and catalogs rarely churn that much).
const maxCachedSchemas = 50000

var printer = message.NewPrinter(language.English)

type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not loaded", url)
}

func (c *schemaCache) get(raw json.RawMessage) compiled {
	key := sha256.Sum256(raw)
	c.mu.RLock()
	hit, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return hit
	}
	s, err := compileSchema(raw)
	hit = compiled{schema: s, err: err, trivial: err == nil && trivialSchema(raw)}
	if err == nil && !hit.trivial {
		hit.flat = compileFlat(raw)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = map[[32]byte]compiled{}
	}
	c.m[key] = hit
	return hit
}

// trivialSchema reports whether raw constrains nothing but "an object".
func trivialSchema(raw json.RawMessage) bool {
	if len(bytes.TrimSpace(raw)) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	for k, v := range m {
		switch k {
		case "type":
			if string(bytes.TrimSpace(v)) != `"object"` {
				return false
			}
		case "properties":
			if string(bytes.TrimSpace(v)) != "{}" {
				return false
			}
		case "title", "description", "$schema", "$comment":
		default:
			return false // required, additionalProperties, anything else
		}
	}
	return true
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	if err := c.AddResource("mem:///input.json", doc); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	s, err := c.Compile("mem:///input.json")
	if err != nil {
		return nil, fmt.Errorf("input schema is invalid: %w", err)
	}
	return s, nil
}

// Validate checks the arguments against the resolved tool's input schema.
func Validate() Middleware {
	var cache schemaCache
	return func(next Handler) Handler {
		return func(ctx context.Context, req *Request) *Response {
			args, err := normaliseArgs(req.Args)
			if err != nil {
				return fail(invalidArgs(req, []Problem{{Path: "", Message: err.Error()}}), "invalid")
			}
			req.Args = args
			c := cache.get(req.Resolved.InputSchema)
			if c.err != nil {
				return fail(toolerr.New(toolerr.BackendError,
					"The provider published a broken schema for this tool; report it to the user instead of retrying.",
					"tool %q cannot be validated: %v", req.Resolved.Canonical, c.err), "invalid")
			}
			if c.trivial { // any object will do: json.Valid proved it is one
				if !json.Valid(args) {
					return fail(invalidArgs(req, []Problem{{Message: "arguments are not valid JSON"}}), "invalid")
				}
				return providerChecks(ctx, req, next)
			}
			if c.flat != nil && c.flat.accepts(args) {
				return providerChecks(ctx, req, next)
			}
			// One parse: the validator's own decoder checks the syntax too.
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
			if err != nil {
				return fail(invalidArgs(req, []Problem{{Message: "arguments are not valid JSON"}}), "invalid")
			}
			if err := c.schema.Validate(inst); err != nil {
				var ve *jsonschema.ValidationError
				if errors.As(err, &ve) {
					return fail(invalidArgs(req, problems(ve)), "invalid")
				}
				return fail(invalidArgs(req, []Problem{{Message: err.Error()}}), "invalid")
			}
			return providerChecks(ctx, req, next)
		}
	}
}

// providerChecks runs the provider's own argument rules
// (provider.ArgumentValidator) once the schema passed: still the validate
// stage, so an invalid call fails before policy asks anyone to confirm it.
func providerChecks(ctx context.Context, req *Request, next Handler) *Response {
	if req.Skill || req.Backend == nil {
		return next(ctx, req)
	}
	v, ok := provider.As[provider.ArgumentValidator](req.Backend)
	if !ok {
		return next(ctx, req)
	}
	if err := v.ValidateArguments(req.Resolved, req.Args); err != nil {
		if te, ok := toolerr.As(err); ok {
			return fail(te, "invalid")
		}
		return fail(invalidArgs(req, []Problem{{Message: err.Error()}}), "invalid")
	}
	return next(ctx, req)
}

// normaliseArgs turns absent or null arguments into {} and rejects non-objects.
func normaliseArgs(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage(`{}`), nil
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", kindOf(trimmed))
	}
	return trimmed, nil // its syntax is checked once, by whoever parses it next
}

func kindOf(b []byte) string {
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// Problem is one schema violation, located by JSON Pointer.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func problems(ve *jsonschema.ValidationError) []Problem {
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Problem{Path: "/" + strings.Join(e.InstanceLocation, "/"), Message: e.ErrorKind.LocalizedString(printer)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	const maxProblems = 20
	if len(out) > maxProblems {
		out = out[:maxProblems]
	}
	return out
}

func invalidArgs(req *Request, ps []Problem) *toolerr.Error {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		if p.Path == "" || p.Path == "/" {
			msgs[i] = p.Message
		} else {
			msgs[i] = p.Path + ": " + p.Message
		}
	}
	// The tool as the caller named it (git_log from the command line, log
	// through agent_tools_git_call), not always the provider's own name.
	name := req.Tool
	if name == "" {
		name = req.Resolved.Name
	}
	e := toolerr.New(toolerr.InvalidArguments,
		"Fix the listed arguments to match expected_schema and call again; do not repeat the same arguments.",
		"arguments for %q do not match its schema: %s", clipName(name), strings.Join(msgs, "; ")).
		With("problems", ps).
		With("expected_schema", req.Resolved.InputSchema)
	return e
}
