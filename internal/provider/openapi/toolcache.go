package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// toolsCacheVersion changes whenever the conversion changes what it makes.
const toolsCacheVersion = 1

// converted is what a document turns into, as stored on disk: parsing a
// large document (GitHub's: 13 MB, seconds) happens once per document
// version and selection, and later starts read this instead. The key
// digests the document's bytes and every setting the conversion reads, so
// a changed document or config never meets a stale list. It holds no
// credential: only the names of the headers auth sets.
type converted struct {
	Version int                   `json:"version"`
	Key     string                `json:"key"`
	Base    string                `json:"base"`
	Title   string                `json:"title,omitempty"`
	Ops     []storedOp            `json:"ops"`
	Skipped []provider.Diagnostic `json:"skipped,omitempty"`
}

type storedOp struct {
	Tool      catalog.Tool      `json:"tool"`
	Method    string            `json:"method"`
	Path      string            `json:"path"`
	Params    []storedParam     `json:"params,omitempty"`
	BodyKind  string            `json:"bodyKind,omitempty"`
	BodyMedia string            `json:"bodyMedia,omitempty"`
	BodyWhole string            `json:"bodyWhole,omitempty"`
	BodyField map[string]string `json:"bodyField,omitempty"`
}

type storedParam struct {
	Name, Arg, In, Style string
	Explode              bool
}

func (p *Provider) conversionKey(doc []byte, sel selection) string {
	h := sha256.New()
	settings, _ := json.Marshal(struct {
		V                                      int
		ID, Spec, Base                         string
		Include, Exclude, ReadOnly, AuthHeader []string
	}{toolsCacheVersion, p.opts.ID, p.opts.Spec, p.opts.BaseURL, sel.include, sel.exclude, sel.readonly, sel.authHeaders})
	h.Write(settings)
	h.Write(doc)
	return hex.EncodeToString(h.Sum(nil))
}

func (p *Provider) toolsCachePath(key string) string {
	dir := p.cacheDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, p.opts.ID+"-tools-"+key[:16]+".json")
}

// loadConverted returns the stored conversion for key, or nil.
func (p *Provider) loadConverted(key string) (*converted, map[string]*operation, []catalog.Tool, *url.URL) {
	path := p.toolsCachePath(key)
	if path == "" {
		return nil, nil, nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, nil
	}
	var c converted
	if json.Unmarshal(data, &c) != nil || c.Version != toolsCacheVersion || c.Key != key {
		return nil, nil, nil, nil // corrupt or from another version: convert again
	}
	base, err := url.Parse(c.Base)
	if err != nil || base.Host == "" {
		return nil, nil, nil, nil
	}
	ops := make(map[string]*operation, len(c.Ops))
	tools := make([]catalog.Tool, 0, len(c.Ops))
	for _, s := range c.Ops {
		o := &operation{tool: s.Tool, method: s.Method, path: s.Path, bodyKind: s.BodyKind, bodyMedia: s.BodyMedia, bodyWhole: s.BodyWhole, bodyField: s.BodyField}
		for _, sp := range s.Params {
			o.params = append(o.params, param{name: sp.Name, arg: sp.Arg, in: sp.In, style: sp.Style, explode: sp.Explode})
		}
		ops[s.Tool.Name] = o
		tools = append(tools, s.Tool)
	}
	return &c, ops, tools, base
}

// saveConverted stores a conversion; failing to is not an error (the next
// start converts again).
func (p *Provider) saveConverted(key string, base *url.URL, title string, tools []catalog.Tool, ops map[string]*operation, skipped []provider.Diagnostic) {
	path := p.toolsCachePath(key)
	if path == "" {
		return
	}
	c := converted{Version: toolsCacheVersion, Key: key, Base: base.String(), Title: title, Skipped: skipped}
	for _, t := range tools {
		o := ops[t.Name]
		s := storedOp{Tool: o.tool, Method: o.method, Path: o.path, BodyKind: o.bodyKind, BodyMedia: o.bodyMedia, BodyWhole: o.bodyWhole, BodyField: o.bodyField}
		for _, pr := range o.params {
			s.Params = append(s.Params, storedParam{Name: pr.name, Arg: pr.arg, In: pr.in, Style: pr.style, Explode: pr.explode})
		}
		c.Ops = append(c.Ops, s)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return
	}
	if err := writeFileAtomic(path, data); err != nil {
		p.opts.Log.Debug("openapi tool list not cached", "error", err)
		return
	}
	// Conversions of this provider's earlier documents or settings are stale now.
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), p.opts.ID+"-tools-*.json"))
	for _, f := range old {
		if f != path {
			os.Remove(f)
		}
	}
}
