// Package catalog holds tools and skills as plain data: what a provider offers,
// under which canonical name, with which schema and safety class. Providers
// fill it; the registry, index, policy and facade only read it.
package catalog

import (
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"time"
)

// Tool is one callable backend operation, as the runtime sees it.
type Tool struct {
	// Provider is the id of the provider that owns the tool ("local", "builtin", "gh").
	Provider string `json:"provider"`
	// Name is the tool's own name inside its provider (the remote identity).
	Name string `json:"name"`
	// Canonical is the public flat name (docs/modes.md, "Names"), filled by the registry.
	Canonical string `json:"canonical"`
	// Title is an optional display name.
	Title string `json:"title,omitempty"`
	// Description is what the model reads.
	Description string `json:"description"`
	// InputSchema is a JSON Schema object ("type": "object").
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema optionally describes the result's structuredContent (a
	// JSON Schema object); upstream tools pass theirs through.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// ReadOnly tools never need confirmation.
	ReadOnly bool `json:"readOnly"`
	// AlwaysConfirm tools need confirmation even when their provider opts out.
	AlwaysConfirm bool `json:"alwaysConfirm,omitempty"`
	// Timeout overrides the provider's deadline for this tool (0: provider default).
	Timeout time.Duration `json:"-"`
	// Digest is the SHA-256 of the published definition (Definition.Digest),
	// set by the registry: pins and remembered "always" decisions key on it.
	Digest string `json:"-"`
	// Defaults and Hidden come from an operator's override (Override):
	// merged into the arguments before validation (MergeDefaults).
	Defaults map[string]json.RawMessage `json:"-"`
	Hidden   []string                   `json:"-"`
	// Upstream is what an upstream MCP server said of the tool beyond the
	// fields above, for flat mode to publish as it is; nil when it said
	// nothing more (one pointer: most tools have none of it).
	Upstream *UpstreamTool `json:"upstream,omitempty"`
}

// UpstreamTool is an upstream MCP tool's own presentation: its annotations
// (shared with the provider's list, never copied), icons and _meta as the
// JSON it sent.
type UpstreamTool struct {
	Annotations *sdk.ToolAnnotations `json:"annotations,omitempty"`
	Icons       json.RawMessage      `json:"icons,omitempty"`
	Meta        json.RawMessage      `json:"_meta,omitempty"`
}

// Skill is a server-side recipe a provider ships (a skill file's `meta`).
type Skill struct {
	Provider    string    `json:"provider"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Args        string    `json:"args,omitempty"`
	Related     []Related `json:"related,omitempty"`
	Mutates     bool      `json:"mutates,omitempty"`
}

// Related points from one skill to a skill of possibly another provider.
type Related struct {
	Target string `json:"target"` // "prefix:skill"
	Why    string `json:"why,omitempty"`
}

// ProviderInfo is what help/discover say about a provider.
type ProviderInfo struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	Description  string `json:"description"`
	DiscoverHint string `json:"discoverHint,omitempty"`
	// RequireConfirm false means no tool of this provider needs confirmation.
	RequireConfirm bool `json:"requireConfirm"`
	// Timeout is the default per-call deadline (0: the runtime default).
	Timeout time.Duration `json:"-"`
	// Flat tools of host-local providers (local, builtin) carry no prefix.
	HostLocal bool `json:"-"`
}
