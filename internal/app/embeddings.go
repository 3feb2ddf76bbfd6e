package app

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/embedding"
	"github.com/agent-tools/agent-tools/internal/embedding/localmodel"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/status"
)

// withEmbeddings installs the semantic stage the config asks for
// (index.semantic.model: a model folder run in process; or
// index.embeddings: an endpoint) on the generation's registry, before any
// provider is added. Without it, or when it fails, ranking is lexical.
func (g *generation) withEmbeddings(e config.Embeddings, sem config.Semantic) {
	var (
		emb   embedding.Embedder
		model string // the cache keys' model name
		where string // what the default cache file is named after
		o     = embedding.Options{Logger: g.log, Weight: sem.Weight}
	)
	switch {
	case sem.Enabled():
		m, err := localmodel.Open(sem.Model)
		if err != nil {
			g.failed("index", "embeddings", err)
			return
		}
		// Open returns at once; the model loads in the background, and
		// searches stay lexical until the tools are embedded.
		g.closers = append(g.closers, m)
		emb, model, where = m, m.Spec().ID, m.Spec().ID
		o.QueryTimeout, o.BatchSize, o.BatchTimeout = localQueryTimeout, localBatch, localBatchTimeout
		if e.Timeout.Duration > 0 { // index.embeddings.timeout, as for an endpoint
			o.QueryTimeout = e.Timeout.Duration
		}
	case e.Enabled():
		c, err := embedding.NewClient(e.URL, e.Model, e.Headers, nil)
		if err != nil {
			g.failed("index", "embeddings", err)
			return
		}
		emb, model, where = c, e.Model, c.Endpoint()+"\x00"+e.Model
		o.QueryTimeout = e.Timeout.Duration
	default:
		return
	}
	path := e.Cache
	if path == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			// One file per endpoint and model (or model folder): vectors of
			// different models never mix.
			sum := sha256.Sum256([]byte(where))
			path = filepath.Join(dir, "agent-tools", fmt.Sprintf("vectors-%x.bin", sum[:8]))
		}
	}
	cache, err := embedding.OpenCache(path)
	if err != nil {
		g.log.Warn("embeddings: vector cache unusable, keeping vectors in memory", "err", err)
		cache = nil
	}
	// The fusion weight: index.semantic.weight, else the self-check's.
	o.Model, o.Cache = model, cache
	st := embedding.NewStore(emb, o)
	g.reg.SetSemantic(st)
	g.closers = append(g.closers, st)
}

// An in-process model: a query's deadline unless index.embeddings.timeout
// sets one (the MiniLM-L6 shape takes 0.2-0.3 s for a query at p50, 0.4-0.8 s
// at p99, on a shared 2-core machine: docs/discovery.md), and the tool texts
// per background batch and its deadline (the pure-Go runtime embeds about
// a tool text a second there).
const (
	localQueryTimeout = time.Second
	localBatch        = 16
	localBatchTimeout = 10 * time.Minute
)

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
