package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/text"
)

// setToolsLocked installs a live tool list from the upstream. It keeps the
// current slice when the list is unchanged (the registry then skips its
// work) and reports whether the tools changed. The list is kept as its
// entries (they share their strings and schemas with the tools built from
// them): no SDK value of it outlives the listing.
func (p *Provider) setToolsLocked(entries []*listedTool) bool {
	wasListed := p.listed
	p.listed, p.fromCache = true, false
	// The first list needs no digest: there is nothing to compare it with.
	// Its digest is taken when the next list arrives, off the start-up path
	// (listDigest encodes the whole list).
	if wasListed {
		if p.listKey == "" {
			p.listKey = p.digestLocked()
		}
		if key := listDigest(entries); key != "" && key == p.listKey {
			return false // the entries kept are the ones the tools share
		}
	}
	p.listKey, p.cacheFile = "", nil
	p.entries = entries
	p.tools, p.toolDiags = p.convert(entries)
	p.served.Store(false)
	return true
}

// setCachedToolsLocked installs the tool list read from the disk cache: the
// first list, at start-up. Its tools keep their schemas as the JSON the
// cache holds (never decoded into maps and encoded again: at 10,000 tools
// that was a third of a warm start). The entries are not kept: the list's
// digest, needed only when the next live list arrives, is taken from the
// cache file then (its bytes are kept by the cache anyway, until it saves).
func (p *Provider) setCachedToolsLocked(c *cached) {
	p.listed, p.fromCache, p.listKey = true, true, ""
	p.entries, p.cacheFile = nil, c.File
	p.tools, p.toolDiags = p.convert(c.Tools)
	p.served.Store(false)
}

// digestLocked is the digest of the list the tools were built from.
func (p *Provider) digestLocked() string {
	if p.entries == nil && p.cacheFile != nil {
		var f struct {
			Tools []*listedTool `json:"tools"`
		}
		err := json.Unmarshal(p.cacheFile, &f)
		p.cacheFile = nil
		if err != nil {
			return ""
		}
		for _, t := range f.Tools {
			if t != nil {
				compactSchemas(t) // as load did
			}
		}
		return listDigest(f.Tools)
	}
	return listDigest(p.entries)
}

// listDigest is the digest of a tool list as the cache writes it: every
// field of every entry ("" if it cannot be encoded, which never equals).
func listDigest(entries []*listedTool) string {
	b, err := json.Marshal(entries)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// listedTool is one entry of a tool list: every field of the upstream's
// entry (what the cache stores), with the schemas, _meta and icons as JSON.
// It comes from a live list (fromSDK) or is decoded from the cache as is (the
// schemas stay JSON). A null entry of the list is nil.
type listedTool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *sdk.ToolAnnotations `json:"annotations,omitempty"`
	Meta         json.RawMessage      `json:"_meta,omitempty"`
	Icons        json.RawMessage      `json:"icons,omitempty"`

	schemaErr error // a live tool's input schema that cannot be used
}

// fromSDK converts one entry of a live list; the result shares nothing
// with t but its annotations (which the SDK does not touch again).
func fromSDK(t *sdk.Tool) *listedTool {
	if t == nil {
		return nil
	}
	lt := &listedTool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}
	lt.InputSchema, lt.schemaErr = inputSchema(t.InputSchema)
	if lt.schemaErr != nil && t.InputSchema != nil {
		// Kept as the upstream said it (for the cache, whose reader finds
		// the same fault in it).
		if b, err := json.Marshal(t.InputSchema); err == nil {
			lt.InputSchema = b
		}
	}
	lt.OutputSchema = marshalOmitNull(t.OutputSchema)
	if len(t.Meta) > 0 {
		lt.Meta = marshalOmitNull(t.Meta)
	}
	if len(t.Icons) > 0 {
		lt.Icons = marshalOmitNull(t.Icons)
	}
	return lt
}

// marshalOmitNull is v as JSON, nil for nil, null or what cannot be encoded.
func marshalOmitNull(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// schema returns the tool's input schema, checked as inputSchema checks a
// live one, with the same messages.
func (t *listedTool) schema() (json.RawMessage, error) {
	if t.schemaErr != nil || t.InputSchema == nil {
		if t.schemaErr == nil {
			t.schemaErr = fmt.Errorf("its inputSchema is missing")
		}
		return nil, t.schemaErr
	}
	// The cache holds schemas as json.Marshal wrote them and the list was
	// validated as a whole when decoded, so the common case is only a look
	// at the top-level "type" (decoding each schema was most of the cost).
	raw := t.InputSchema
	if typ, ok := memberOf(raw, "type"); ok && (typ == nil || string(typ) == `"object"`) {
		return raw, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("its inputSchema cannot be decoded: %v", err)
	}
	return inputSchema(v)
}

// convert validates the upstream's tools and applies the policy data. A tool
// without a name, with an input schema that is not a JSON object, or with a
// name already seen is rejected with a diagnostic; the others are kept.
func (p *Provider) convert(raw []*listedTool) ([]catalog.Tool, []provider.Diagnostic) {
	id := p.opts.ID
	tools := make([]catalog.Tool, 0, len(raw))
	var diags []provider.Diagnostic
	reject := func(item, format string, args ...any) {
		diags = append(diags, provider.Diagnostic{Provider: id, Item: item, Status: "skipped", Reason: fmt.Sprintf(format, args...)})
	}
	seen := make(map[string]bool, len(raw))
	for i, t := range raw {
		if t == nil {
			reject(fmt.Sprintf("tools[%d]", i), "the upstream listed a null tool")
			continue
		}
		if t.Name == "" {
			reject(fmt.Sprintf("tools[%d]", i), "the upstream listed a tool without a name")
			continue
		}
		if seen[t.Name] {
			reject(t.Name, "the upstream lists this tool name more than once; the first one is kept")
			continue
		}
		schema, err := t.schema()
		if err != nil {
			reject(t.Name, "%v; the tool cannot be called safely", err)
			continue
		}
		seen[t.Name] = true
		ct := catalog.Tool{Provider: id, Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema}
		if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
			ct.OutputSchema = t.OutputSchema // flat mode publishes it
		}
		if t.Annotations != nil || len(t.Icons) > 0 || len(t.Meta) > 0 {
			// Shared with the entry, as the schemas are: flat mode
			// publishes what the upstream said.
			ct.Upstream = &catalog.UpstreamTool{Annotations: t.Annotations, Icons: t.Icons, Meta: t.Meta}
		}
		if ct.Title == "" && t.Annotations != nil {
			ct.Title = t.Annotations.Title
		}
		switch {
		case p.readOnly[t.Name]:
			ct.ReadOnly = true
		case p.opts.TrustAnnotations && t.Annotations != nil:
			a := t.Annotations
			if a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint) {
				ct.ReadOnly = true
			} else if a.DestructiveHint != nil && *a.DestructiveHint {
				ct.AlwaysConfirm = true
			}
		}
		tools = append(tools, ct)
	}
	return tools, diags
}

// inputSchema checks that a tool's input schema is a JSON object describing
// an object (MCP arguments are always an object) and returns it as JSON.
func inputSchema(v any) (json.RawMessage, error) {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil, fmt.Errorf("its inputSchema is missing")
		}
		return nil, fmt.Errorf("its inputSchema is not a JSON object (got %s)", jsonType(v))
	}
	if typ, ok := m["type"]; ok && typ != "object" {
		return nil, fmt.Errorf("its inputSchema has type %s; tool arguments are an object", text.Clip(fmt.Sprint(typ), 40))
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("its inputSchema cannot be encoded: %v", err)
	}
	return b, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// memberOf returns the raw value of the last member named key of a JSON
// object (nil if none), reading only its top level. The JSON must be valid
// (it is part of a document already decoded); ok is false when raw is not
// an object or has a key with an escape, which the caller then decodes
// properly (as it does in every case but the common one).
func memberOf(raw []byte, key string) (val []byte, ok bool) {
	n := len(raw)
	if n < 2 || raw[0] != '{' {
		return nil, false
	}
	for i := 1; i < n; {
		switch raw[i] {
		case ' ', '\t', '\n', '\r', ',':
			i++
			continue
		case '}':
			return val, true
		case '"':
		default:
			return nil, false
		}
		end := i + 1
		for end < n && raw[end] != '"' {
			if raw[end] == '\\' {
				return nil, false
			}
			end++
		}
		k := raw[i+1 : min(end, n)]
		i = end + 1
		for i < n && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == ':') {
			i++
		}
		start := i
		if i = jsonscan.SkipValue(raw, i); i < 0 {
			return nil, false
		}
		if string(k) == key {
			val = raw[start:i]
		}
	}
	return nil, false
}
