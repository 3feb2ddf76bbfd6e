package config

import (
	"github.com/agent-tools/agent-tools/internal/redact"

	"math"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Index configures the search index behind discover, search and the CLI.
type Index struct {
	Embeddings Embeddings `json:"embeddings" yaml:"embeddings"`
	Semantic   Semantic   `json:"semantic,omitzero" yaml:"semantic,omitempty"`
}

// Semantic configures the semantic stage's model when it runs in process,
// and how its ranking is fused with the lexical one.
type Semantic struct {
	// Model is a folder holding a sentence-embedding model exported to
	// ONNX (model.onnx, tokenizer.json; a Hugging Face export), run in
	// process by binaries built with -tags onnx: a semantic stage without
	// a server, instead of index.embeddings. A relative path is relative
	// to the config file.
	Model string `json:"model,omitempty" yaml:"model,omitempty"`
	// Weight, when set, is the fusion weight (0 = lexical alone; the
	// embeddings' reciprocal ranks count Weight times the lexical ones').
	// Unset, the runtime measures the model on the catalog and chooses.
	Weight *float64 `json:"weight,omitempty" yaml:"weight,omitempty"`
}

// Enabled reports whether a model folder is configured.
func (s Semantic) Enabled() bool { return s.Model != "" }

// maxSemanticWeight bounds index.semantic.weight (10: the model decides
// nearly alone).
const maxSemanticWeight = 10

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
	defer func() {
		if out.Semantic.Model != "" && out.Embeddings.URL != "" {
			mp := joinKey(joinKey(path, "semantic"), "model")
			d.errAt(d.nodeAt(mp, v), mp, "index.embeddings.url is set too: the semantic stage is either a model folder in process or an endpoint, remove one")
		}
	}()
	d.mapping(v, path, Keys(Index{}), func(key string, _, v *yaml.Node, p string) {
		if key == "semantic" {
			d.semantic(v, p, &out.Semantic)
			return
		}
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

// semantic decodes index.semantic.
func (d *Decoder) semantic(v *yaml.Node, path string, out *Semantic) {
	d.mapping(v, path, []string{"model", "weight"}, func(key string, _, v *yaml.Node, p string) {
		if isNull(v) {
			return
		}
		if key == "model" {
			var m string
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Decode(&m) != nil || strings.TrimSpace(m) == "" {
				d.errAt(v, p, "want the path of a model folder (model.onnx and tokenizer.json, e.g. ./models/bge-small)")
				return
			}
			out.Model = strings.TrimSpace(m)
			return
		}
		var w float64
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") || v.Decode(&w) != nil {
			d.errAt(v, p, "want a number from 0 (lexical ranking alone) to %d, or leave it unset for the runtime to measure the model and choose", maxSemanticWeight)
			return
		}
		if w < 0 || w > maxSemanticWeight || math.IsNaN(w) {
			d.errAt(v, p, "want a number from 0 (lexical ranking alone) to %d, got %g", maxSemanticWeight, w)
			return
		}
		out.Weight = &w
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
