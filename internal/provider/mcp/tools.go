package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/textutil"
)

// setToolsLocked installs a tool list from the upstream or the cache. It
// keeps the current slice when the list is unchanged (the registry then skips
// its work) and reports whether the tools changed.
func (p *Provider) setToolsLocked(raw []*sdk.Tool, fromCache bool) bool {
	wasListed := p.listed
	// The first list (the cache, at start-up) needs no digest: there is
	// nothing to compare it with. Its digest is taken when the next list
	// arrives, off the start-up path (listDigest encodes the whole list).
	key := ""
	if wasListed {
		if p.listKey == "" {
			p.listKey = listDigest(p.rawTools)
		}
		key = listDigest(raw)
	}
	p.rawTools = raw
	p.listed, p.fromCache = true, fromCache
	if wasListed && key == p.listKey {
		return false
	}
	p.listKey = key
	p.tools, p.toolDiags = p.convert(raw)
	p.served.Store(false)
	return true
}

func listDigest(raw []*sdk.Tool) string {
	b, err := json.Marshal(raw)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// convert validates the upstream's tools and applies the policy data. A tool
// without a name, with an input schema that is not a JSON object, or with a
// name already seen is rejected with a diagnostic; the others are kept.
func (p *Provider) convert(raw []*sdk.Tool) ([]catalog.Tool, []provider.Diagnostic) {
	id := p.opts.ID
	tools := make([]catalog.Tool, 0, len(raw))
	var diags []provider.Diagnostic
	reject := func(item, format string, args ...any) {
		diags = append(diags, provider.Diagnostic{Provider: id, Item: item, Status: "skipped", Reason: fmt.Sprintf(format, args...)})
	}
	seen := map[string]bool{}
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
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			reject(t.Name, "%v; the tool cannot be called safely", err)
			continue
		}
		seen[t.Name] = true
		ct := catalog.Tool{Provider: id, Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema}
		if out, err := json.Marshal(t.OutputSchema); err == nil && t.OutputSchema != nil && string(out) != "null" {
			ct.OutputSchema = out // carried for the typed surfaces; flat mode does not publish it yet
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
		return nil, fmt.Errorf("its inputSchema has type %s; tool arguments are an object", textutil.Clip(fmt.Sprint(typ), 40))
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
