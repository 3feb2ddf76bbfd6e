package pipeline

import "github.com/agent-tools/agent-tools/internal/catalog"

// lookup finds req's tool by provider and name, or by canonical name.
func lookup(cat Catalog, req *Request) (catalog.Tool, bool) {
	if req.Provider != "" {
		return cat.Find(req.Provider, req.Tool)
	}
	return cat.Lookup(req.Tool)
}
