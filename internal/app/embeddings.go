package app

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/embedding"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
)

// withEmbeddings installs the semantic stage the config asks for
// (index.embeddings) on the generation's registry, before any provider is
// added. Without it, or when it fails, ranking is lexical.
func (g *generation) withEmbeddings(e config.Embeddings) {
	if !e.Enabled() {
		return
	}
	c, err := embedding.NewClient(e.URL, e.Model, e.Headers, nil)
	if err != nil {
		g.failed("index", "embeddings", err)
		return
	}
	path := e.Cache
	if path == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			// One file per endpoint and model: vectors of different models
			// never mix.
			sum := sha256.Sum256([]byte(c.Endpoint() + "\x00" + e.Model))
			path = filepath.Join(dir, "agent-tools", fmt.Sprintf("vectors-%x.bin", sum[:8]))
		}
	}
	cache, err := embedding.OpenCache(path)
	if err != nil {
		g.log.Warn("embeddings: vector cache unusable, keeping vectors in memory", "err", err)
		cache = nil
	}
	st := embedding.NewStore(c, embedding.Options{Model: e.Model, Cache: cache, QueryTimeout: e.Timeout.Duration, Logger: g.log})
	g.reg.SetSemantic(st)
	g.closers = append(g.closers, st)
}

// semanticDiagnostics is doctor's line for the semantic stage, if any.
func semanticDiagnostics(reg *registry.Registry) []provider.Diagnostic {
	d, ok := reg.Semantic().(interface {
		Diagnose() (status, reason string)
	})
	if !ok {
		return nil
	}
	status, reason := d.Diagnose()
	return []provider.Diagnostic{{Provider: "index", Item: "embeddings", Status: status, Reason: reason}}
}
