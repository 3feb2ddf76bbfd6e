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
	"github.com/agent-tools/agent-tools/internal/status"
)

// withEmbeddings installs the semantic stage the config asks for
// (index.embeddings) on the generation's registry, before any provider is
// added. Without it, or when it fails, ranking is lexical.
func (g *generation) withEmbeddings(e config.Embeddings, sem config.Semantic) {
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
	// The fusion weight: index.semantic.weight, else the self-check's.
	st := embedding.NewStore(c, embedding.Options{Model: e.Model, Cache: cache, QueryTimeout: e.Timeout.Duration, Logger: g.log,
		Weight: sem.Weight})
	g.reg.SetSemantic(st)
	g.closers = append(g.closers, st)
}

// semanticStatus is runtime_status's account of the semantic stage (nil:
// none configured).
func semanticStatus(reg *registry.Registry) *status.Embeddings {
	st, ok := reg.Semantic().(*embedding.Store)
	if !ok {
		return nil
	}
	s := st.Status()
	out := &status.Embeddings{Tools: s.Docs, Embedded: s.Vectors, Degraded: s.Degraded, FusionWeight: s.Weight, WeightFrom: s.WeightFrom}
	if c := s.SelfCheck; c != nil {
		sc := &status.SelfCheck{Tools: c.Docs, Queries: c.Queries,
			Lexical: status.Figures(c.Lexical), Model: status.Figures(c.Model), Summary: c.Summary()}
		for _, f := range c.Fused {
			sc.Fused = append(sc.Fused, status.WeightFigures{Weight: f.Weight, Figures: status.Figures(f.Figures)})
		}
		out.SelfCheck = sc
	}
	return out
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
