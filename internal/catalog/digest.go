package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Definition is what a model is shown of a tool: the part a pin covers
// (docs/pins.md). A change to any of it is a change of what the person trusted.
type Definition struct {
	Name          string          `json:"name"`
	Title         string          `json:"title,omitempty"`
	Description   string          `json:"description"`
	InputSchema   json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema  json.RawMessage `json:"outputSchema,omitempty"`
	ReadOnly      bool            `json:"readOnly,omitempty"`
	AlwaysConfirm bool            `json:"alwaysConfirm,omitempty"`
	// Annotations are an upstream MCP server's own hints (destructive,
	// idempotent, open-world...): flat mode publishes them, so a changed
	// hint is a changed definition.
	Annotations *sdk.ToolAnnotations `json:"annotations,omitempty"`
	// Icons and Meta are the upstream's icons and _meta, which flat mode
	// republishes as they are (a UI template, a prompt, a tracking image):
	// pinned like the rest.
	Icons json.RawMessage `json:"icons,omitempty"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// Def returns t's published definition.
func (t Tool) Def() Definition {
	d := Definition{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
		OutputSchema: t.OutputSchema, ReadOnly: t.ReadOnly, AlwaysConfirm: t.AlwaysConfirm}
	if t.Upstream != nil {
		d.Annotations, d.Icons, d.Meta = t.Upstream.Annotations, t.Upstream.Icons, t.Upstream.Meta
	}
	return d
}

// Digest is the hex SHA-256 of d's JSON form. Schemas are hashed as the
// upstream sent them: a re-ordered schema is a changed one, which errs on
// the side of asking again.
func (d Definition) Digest() string {
	if s := d.digestFast(); s != "" {
		return s
	}
	b, err := json.Marshal(d)
	if err != nil { // a schema that is not JSON: hash its bytes as text
		b, _ = json.Marshal([]any{d.Name, d.Title, d.Description, string(d.InputSchema), string(d.OutputSchema), d.ReadOnly, d.AlwaysConfirm})
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
