package config

import (
	"github.com/agent-tools/agent-tools/internal/redact"

	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Index configures the search index behind discover, search and the CLI.
type Index struct {
	Embeddings Embeddings `json:"embeddings" yaml:"embeddings"`
}

// Embeddings configures the optional semantic stage: an OpenAI-compatible
// /v1/embeddings or an Ollama /api/embed endpoint. Unset URL = lexical
// ranking only.
type Embeddings struct {
	URL     string            `json:"url,omitempty" yaml:"url,omitempty"`         // the full endpoint, e.g. http://127.0.0.1:11434/api/embed
	Model   string            `json:"model,omitempty" yaml:"model,omitempty"`     // e.g. nomic-embed-text
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"` // e.g. Authorization: "Bearer ${OPENAI_API_KEY}"
	Timeout Duration          `json:"timeout" yaml:"timeout"`                     // per-query deadline (default 400ms)
	Cache   string            `json:"cache,omitempty" yaml:"cache,omitempty"`     // vector cache file ("" = the user cache directory)
}

// Enabled reports whether a semantic stage is configured.
func (e Embeddings) Enabled() bool { return e.URL != "" }

// redacted hides header values (API keys).
func (ix Index) redacted() Index {
	ix.Embeddings.Headers = redactMap(ix.Embeddings.Headers)
	ix.Embeddings.URL = redact.MaskURL(ix.Embeddings.URL)
	return ix
}

// index decodes the top-level index: mapping.
func (d *Decoder) index(v *yaml.Node, path string, out *Index) {
	d.mapping(v, path, Keys(Index{}), func(_ string, _, v *yaml.Node, p string) {
		e := &out.Embeddings
		if !d.Decode(v, p, e) {
			return
		}
		e.URL, e.Model = strings.TrimSpace(e.URL), strings.TrimSpace(e.Model)
		up := joinKey(p, "url")
		switch {
		case d.meta.bad[up]:
		case e.URL == "" && (e.Model != "" || len(e.Headers) > 0):
			d.errAt(v, up, "embeddings need a url (e.g. http://127.0.0.1:11434/api/embed for Ollama, https://api.openai.com/v1/embeddings)")
		case e.URL != "" && !embeddingsURL(e.URL):
			// The value is not printed: it may hold a key from ${VAR}.
			d.errAt(d.nodeAt(up, v), up, "want an http(s) endpoint ending in /api/embed (Ollama) or /embeddings (OpenAI-compatible, e.g. /v1/embeddings)")
		case e.URL != "" && e.Model == "" && !d.meta.bad[joinKey(p, "model")]:
			mp := joinKey(p, "model")
			d.errAt(d.nodeAt(mp, v), mp, "embeddings need a model (e.g. nomic-embed-text, text-embedding-3-small)")
		}
		if e.Timeout.Duration < 0 {
			d.errAt(v, joinKey(p, "timeout"), "want a positive duration")
		}
	})
}

// nodeAt stands for the value decoded at path (its position), or else for
// fallback: a message about a value found bad after decoding points at it.
func (d *Decoder) nodeAt(path string, fallback *yaml.Node) *yaml.Node {
	if _, given := d.meta.key[path]; !given {
		return fallback
	}
	p := d.meta.val[path]
	return &yaml.Node{Line: p.Line, Column: p.Col}
}

// embeddingsURL mirrors embedding.ParseEndpoint (config stays a leaf package).
func embeddingsURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	p := strings.TrimRight(u.Path, "/")
	return strings.HasSuffix(p, "/api/embed") || strings.HasSuffix(p, "/embeddings")
}
