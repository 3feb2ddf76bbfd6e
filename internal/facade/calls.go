package facade

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

func objectSchema(props map[string]any, required []string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func (f *Facade) callDef(p registry.ProviderStatus) toolDef {
	id := p.Info.ID
	name := metaName(id, "call")
	desc := fmt.Sprintf("Call a tool of provider %q by name: {toolName, arguments, confirm?}. Names and arguments come from %s.",
		id, metaName(id, "discover"))
	if names := f.toolNames(p); names != "" {
		desc += " Tools: " + names + "."
	}
	return toolDef{
		tool: &sdk.Tool{
			Name: name, Description: desc,
			InputSchema: objectSchema(map[string]any{
				"toolName":  prop("string", "The tool's name, as discover returns it."),
				"arguments": prop("object", "The tool's own arguments."),
				"confirm":   f.confirmProp(),
			}, []string{"toolName"}),
			Annotations: &sdk.ToolAnnotations{Title: "Call a " + id + " tool", DestructiveHint: boolPtr(p.Info.RequireConfirm), OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			preq := callRequestIn(req.Params.Arguments, name, "toolName", f.tokenMode(), progressiveShape{via: name}, f.paramOf(req, id))
			preq.Provider = id
			return f.call(ctx, req, preq), nil
		},
	}
}

// toolNames lists a small provider's tool names in its call description, so a
// model can often skip discover; large providers list none (it would flood).
func (f *Facade) toolNames(p registry.ProviderStatus) string {
	// A provider of 10,000 tools was copied and asked every visibility
	// rule about each tool on every list (a fifth of a warm start) to
	// learn that it has too many to name: when no rule hides a tool its
	// count says so, else the walk stops at the first name too many.
	if p.Tools > namesInDescMx && f.hidesNone(p.Info.ID) {
		return ""
	}
	names := make([]string, 0, namesInDescMx)
	for _, t := range f.cat.Tools(p.Info.ID) {
		if !f.visible(t.Provider, t.Canonical) {
			continue
		}
		if len(names) == namesInDescMx {
			return ""
		}
		names = append(names, t.Name)
	}
	if s := strings.Join(names, ", "); len(s) <= namesInDescChars {
		return s
	}
	return "" // long names: as many tokens as a discover
}

func boolPtr(b bool) *bool { return &b }

// paramOf is callRequestIn's hasParam for a call of provider id's tools
// (id "": canonical names): whether the named tool, as far as the caller
// may see it, has a parameter of that name.
func (f *Facade) paramOf(req *sdk.CallToolRequest, id string) func(tool, key string) bool {
	return func(tool, key string) bool {
		t, ok := f.cat.Lookup(tool)
		if id != "" {
			t, ok = f.cat.Find(id, tool)
		}
		return ok && f.visibleTo(f.grantOf(req.Extra), t.Provider, t.Canonical) && hasParamIn(t.InputSchema, key)
	}
}

// callRequest parses {<nameKey>, arguments, confirm} into a pipeline request.
// Parse failures become the request's Malformed error so they are still
// audited and loop-guarded; every one of them carries the correct shape.
// The other mode's spelling of the name key (toolName/tool) is accepted.
func callRequest(raw json.RawMessage, via, nameKey string, tokens bool, shape pipeline.Shape) *pipeline.Request {
	return callRequestIn(raw, via, nameKey, tokens, shape, nil)
}

// callRequestIn is callRequest reading the envelope's near-miss keys
// (envelope.go) with hasParam, which says whether a tool has a parameter
// of a name (nil: no tool has).
func callRequestIn(raw json.RawMessage, via, nameKey string, tokens bool, shape pipeline.Shape, hasParam func(tool, key string) bool) *pipeline.Request {
	req := &pipeline.Request{Via: via, Shape: shape}
	alias := "tool"
	if nameKey == "tool" {
		alias = "toolName"
	}
	var e *toolerr.Error
	var pre map[string]json.RawMessage
	if isObject(raw) && json.Unmarshal(raw, &pre) != nil {
		pre = nil // decodeArgs words the error
	}
	if pre != nil {
		if readEnvelope(pre, nameKey, alias, hasParam) { // tool_name, args, ...: read as the keys they miss
			raw, _ = jsonscan.Marshal(pre)
		}
		if v, ok := pre[alias]; ok { // progressive says toolName, search says tool: either works
			if _, both := pre[nameKey]; both {
				e = toolerr.New(toolerr.InvalidArguments, "Name the tool once, in `"+nameKey+"`.",
					"%s: both %q and %q given", via, nameKey, alias)
			}
			pre[nameKey] = v
			delete(pre, alias)
			raw, _ = jsonscan.Marshal(pre)
		}
	}
	var m map[string]json.RawMessage
	var de *toolerr.Error
	if pre != nil {
		m, de = allowedArgs(pre, via, nameKey, "arguments", "confirm") // raw decoded once: pre is raw's map (or what raw was rewritten from)
	} else {
		m, de = decodeArgs(raw, via, nameKey, "arguments", "confirm")
	}
	if e == nil {
		e = de
	}
	if e != nil {
		req.Malformed = withShape(e, raw, nameKey, alias, shape)
		req.Args = raw
		return req
	}
	var confirm any
	e = firstErr(field(m, nameKey, via, &req.Tool), field(m, "confirm", via, &confirm))
	if e == nil {
		e = setConfirm(req, confirm, via, tokens)
	}
	if e != nil {
		req.Malformed = withShape(e, raw, nameKey, alias, shape)
		req.Args = raw
		return req
	}
	req.Tool = strings.TrimSpace(req.Tool)
	req.Args = m["arguments"]
	if len(req.Args) > 0 && !isObject(req.Args) && string(req.Args) != "null" {
		// A string holding JSON is a common slip; say so instead of guessing.
		e := toolerr.New(toolerr.InvalidArguments,
			"Pass `arguments` as a JSON object, not as a string or array.",
			"%s: `arguments` must be an object, %s", via, jsonKind(req.Args))
		var inner json.RawMessage
		var str string
		if json.Unmarshal(req.Args, &str) == nil && isObject(json.RawMessage(str)) && json.Unmarshal([]byte(str), &inner) == nil {
			e.With("correct_shape", shape.Call(req.Tool, inner, confirm))
		} else {
			e.With("correct_shape", shape.Call(req.Tool, json.RawMessage(`{}`), confirm))
		}
		req.Malformed = e
	}
	return req
}

// withShape adds the call the model meant to a malformed call's error: the
// tool's own arguments spread at the top level go back inside `arguments`.
func withShape(e *toolerr.Error, raw json.RawMessage, nameKey, alias string, shape pipeline.Shape) *toolerr.Error {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return e.With("correct_shape", shape.Call("<tool name>", json.RawMessage(`{}`), nil))
	}
	var name string
	for _, k := range []string{nameKey, alias} {
		if json.Unmarshal(m[k], &name) == nil && name != "" {
			break
		}
	}
	args := map[string]json.RawMessage{}
	inner := m["arguments"] // a misspelt one was read as it already (envelope.go)
	if isObject(inner) {
		_ = json.Unmarshal(inner, &args)
	}
	spread := false
	for k, v := range m {
		if k != nameKey && k != alias && k != "arguments" && k != "confirm" {
			args[k], spread = v, true
		}
	}
	var confirm any // kept only when it is certainly right
	if c, ok := m["confirm"]; ok && string(bytes.TrimSpace(c)) == "true" {
		confirm = true
	}
	if name == "" {
		name = "<tool name>"
	}
	if spread && name != "<tool name>" {
		e.Message += "; the tool's own arguments go inside `arguments`"
	}
	b, _ := jsonscan.Marshal(args)
	return e.With("correct_shape", shape.Call(name, b, confirm))
}

// setConfirm accepts `confirm` as a boolean or as the one-time token of a
// CONFIRMATION_REQUIRED error (token mode).
func setConfirm(req *pipeline.Request, v any, via string, tokens bool) *toolerr.Error {
	switch c := v.(type) {
	case nil:
		return nil
	case bool:
		req.Confirm = c
		return nil
	case string:
		if tokens {
			req.ConfirmToken = c
			return nil
		}
	}
	if tokens {
		return toolerr.New(toolerr.InvalidArguments, "Pass the confirm token a CONFIRMATION_REQUIRED error gave you.",
			"%s: confirm must be a confirm token", via)
	}
	return toolerr.New(toolerr.InvalidArguments, "Pass confirm: true (a JSON boolean) to confirm.",
		"%s: confirm must be true or false", via)
}

func (f *Facade) tokenMode() bool { return f.rules().Confirm == policy.ConfirmToken }

// isObject reports whether raw starts (after blanks) as a JSON object.
func isObject(raw json.RawMessage) bool { return jsonscan.IsObject(raw) }

func firstErr(errs ...*toolerr.Error) *toolerr.Error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func (f *Facade) searchDef() toolDef {
	var ids []string
	for _, p := range f.visibleProviders() {
		ids = append(ids, p.Info.ID)
	}
	desc := "Search every provider's tools and skills by the capability you need (\"weather forecast for a city\", \"create a pull request\"), not by pasting the user's whole task: for a task of several steps, search once per step. Returns the best matches (more when several fit, fewer when one clearly wins) with their exact names, required arguments, why each matched and (for the top hits) full input schema; then call " + callTool + "."
	if len(ids) > 0 {
		desc += " Providers: " + strings.Join(ids, ", ") + "."
	}
	return toolDef{
		tool: &sdk.Tool{
			Name: searchTool, Description: desc,
			InputSchema: objectSchema(map[string]any{
				"query":    prop("string", queryHelp),
				"provider": prop("string", "Only search this provider (a prefix from agent_tools_help)."),
				"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": maxHits, "description": "How many results to return (default: as many as match well, at most 15)."},
				"schemas":  prop("boolean", "Include every result's full input schema."),
			}, []string{"query"}),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Search tools"},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			a, m, e := parseDiscover(req.Params.Arguments, searchTool, "provider")
			var prov string
			if e == nil {
				e = field(m, "provider", searchTool, &prov)
			}
			if e == nil && a.Query == "" {
				e = toolerr.New(toolerr.InvalidArguments, "Describe what you want to do in `query`, e.g. {\"query\": \"list open pull requests\"}.",
					"%s needs a query", searchTool)
			}
			if e == nil && a.Cursor != "" {
				e = toolerr.New(toolerr.InvalidArguments, "Search results are not paginated; raise `limit` instead.", "%s takes no cursor", searchTool)
			}
			if e != nil {
				return errorResult(e), nil
			}
			f.cat.Refresh(ctx)
			if prov != "" {
				if _, _, ok := f.cat.Provider(prov); !ok {
					return errorResult(toolerr.New(toolerr.ProviderUnavailable, "Call "+helpTool+" for the loaded providers.",
						"provider %q is not loaded", prov)), nil
				}
				if e := f.unavailable(prov); e != nil {
					return errorResult(e), nil
				}
			}
			return jsonResult(f.rank(f.grantOf(req.Extra), a, indexOptions(prov), callTool)), nil
		},
	}
}

func (f *Facade) searchCallDef() toolDef {
	return toolDef{
		tool: &sdk.Tool{
			Name:        callTool,
			Description: "Call a tool by the exact name " + searchTool + " returned: {tool, arguments, confirm?}. Tools that change state need confirm: true, set only when the user wants that change.",
			InputSchema: objectSchema(map[string]any{
				"tool":      prop("string", "The tool's name, exactly as search returned it."),
				"arguments": prop("object", "The tool's own arguments, as its input schema describes."),
				"confirm":   f.confirmProp(),
			}, []string{"tool"}),
			Annotations: &sdk.ToolAnnotations{Title: "Call a tool", DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			preq := callRequestIn(req.Params.Arguments, callTool, "tool", f.tokenMode(), searchShape{}, f.paramOf(req, ""))
			return f.call(ctx, req, preq), nil
		},
	}
}

func (f *Facade) flatTools() []toolDef {
	var defs []toolDef
	limit := f.flatMax()
	for _, p := range f.visibleProviders() {
		for _, t := range f.visibleTools(p.Info.ID) {
			if len(t.Canonical) > limit {
				continue // kept in the registry; a call by this name says how to reach it (miss.go)
			}
			needs := policy.NeedsConfirm(t, p.Info)
			schema, injected, owned := flatSchema(t.InputSchema, needs, f.confirmProp())
			desc := t.Description
			if injected {
				desc += f.confirmNote()
			}
			canonical := t.Canonical
			ro := t.ReadOnly
			tool := &sdk.Tool{
				Name: canonical, Title: t.Title, Description: desc, InputSchema: schema,
				Annotations: &sdk.ToolAnnotations{ReadOnlyHint: ro, DestructiveHint: boolPtr(!ro), OpenWorldHint: boolPtr(true)},
			}
			if p.Info.Kind == "mcp" {
				upstreamFields(tool, t) // what the upstream said of it
			}
			defs = append(defs, toolDef{
				tool:  tool,
				owner: owner{provider: p.Info.ID, canonical: canonical},
				handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					preq := &pipeline.Request{Via: canonical, Tool: canonical, Shape: flatShape{}}
					var confirm any
					preq.Args, confirm = splitConfirm(req.Params.Arguments, !owned)
					if e := setConfirm(preq, confirm, canonical, f.tokenMode()); e != nil {
						preq.Malformed = e
					}
					return f.call(ctx, req, preq), nil
				},
			})
		}
	}
	return defs
}

// upstreamFields adds to a flat tool what its upstream MCP server said of
// it: its outputSchema (as the JSON it sent), icons, _meta, and its
// annotations with the runtime's own view of read-only (it decides
// confirmation: an upstream's readOnlyHint counts only with
// trustAnnotations).
func upstreamFields(tool *sdk.Tool, t catalog.Tool) {
	if len(t.OutputSchema) > 0 {
		tool.OutputSchema = t.OutputSchema
	}
	u := t.Upstream
	if u == nil {
		return
	}
	if a := u.Annotations; a != nil {
		c := *a
		c.ReadOnlyHint = tool.Annotations.ReadOnlyHint
		if c.ReadOnlyHint || c.DestructiveHint == nil {
			c.DestructiveHint = tool.Annotations.DestructiveHint
		}
		if c.OpenWorldHint == nil {
			c.OpenWorldHint = tool.Annotations.OpenWorldHint
		}
		tool.Annotations = &c
	}
	if len(u.Icons) > 0 {
		var icons []sdk.Icon
		if json.Unmarshal(u.Icons, &icons) == nil {
			tool.Icons = icons
		}
	}
	if len(u.Meta) > 0 {
		var meta sdk.Meta
		if json.Unmarshal(u.Meta, &meta) == nil {
			tool.Meta = meta
		}
	}
}

// flatSchema adds the confirmation property to a mutating tool's schema,
// unless the tool already has a parameter of that name (owned: never shadow it).
func flatSchema(raw json.RawMessage, needsConfirm bool, confirm map[string]any) (schema any, injected, owned bool) {
	var s map[string]any
	if json.Unmarshal(raw, &s) != nil || s == nil {
		s = map[string]any{"type": "object"}
	}
	props, _ := s["properties"].(map[string]any)
	if _, taken := props[ConfirmArg]; taken {
		return s, false, true
	}
	if !needsConfirm {
		return s, false, false
	}
	if props == nil {
		props = map[string]any{}
	}
	withConfirm := make(map[string]any, len(s)+1)
	for k, v := range s {
		withConfirm[k] = v
	}
	p2 := make(map[string]any, len(props)+1)
	for k, v := range props {
		p2[k] = v
	}
	p2[ConfirmArg] = confirm
	withConfirm["properties"] = p2
	return withConfirm, true, false
}

// splitConfirm removes the confirmation property from a flat call (when the
// tool does not own a parameter of that name) and returns its value.
func splitConfirm(raw json.RawMessage, strip bool) (json.RawMessage, any) {
	if !strip || !isObject(raw) || !bytes.Contains(raw, []byte(ConfirmArg)) {
		return raw, nil // the common case: no confirmation to take out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw, nil
	}
	c, ok := m[ConfirmArg]
	if !ok {
		return raw, nil
	}
	delete(m, ConfirmArg)
	var confirm any
	if json.Unmarshal(c, &confirm) != nil || confirm == nil {
		confirm = struct{}{} // rejected by setConfirm: never silently "not confirmed"
	}
	out, _ := jsonscan.Marshal(m)
	return out, confirm
}

// confirmProp is the schema of the confirmation argument: a boolean, or in
// token mode also the one-time token a CONFIRMATION_REQUIRED error returns.
// confirmNote is what a flat mutating tool's description says about
// confirmation, in the policy's own terms.
func (f *Facade) confirmNote() string {
	if f.rules().Confirm == policy.ConfirmToken {
		return " (Not known to be read-only: the first call answers with a confirm_token; repeat it with " + ConfirmArg + " set to that token only when the user wants this call.)"
	}
	return " (Not known to be read-only: pass " + ConfirmArg + ": true only when the user wants this call.)"
}

func (f *Facade) confirmProp() map[string]any {
	if f.rules().Confirm == policy.ConfirmToken {
		return map[string]any{"type": []string{"boolean", "string"},
			"description": "To confirm a call that changes state, pass the confirm token from its CONFIRMATION_REQUIRED error."}
	}
	return prop("boolean", "Set to true to confirm a call that changes state, only when the user wants that change.")
}
