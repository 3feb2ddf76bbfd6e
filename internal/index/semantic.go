package index

import (
	"slices"
	"strings"
)

// Semantic is an optional dense-retrieval stage (external embeddings,
// internal/embed) fused with the lexical ranking. The index tells it every
// provider's documents and asks it, per query, for the most similar ones;
// any error means the lexical ranking alone, never a failed search.
type Semantic interface {
	// Update is told a provider's documents after each Replace (docs nil
	// after Remove). It must not block on the network.
	Update(provider string, docs []Doc)
	// Similar returns up to k documents most similar to query that match
	// o's Provider and Kind, best first. It bounds its own time.
	Similar(query string, o Options, k int) ([]Hit, error)
}

// Weigher is a semantic stage that decides its own fusion weight (a
// calibrated one: embedding.Store measures the model on the catalog). The
// weight replaces Config.SemanticWeight; 0 or less means the lexical
// ranking alone, and the stage is then not asked at all.
type Weigher interface {
	FusionWeight() float64
}

// Fusion methods of the semantic stage (Config.SemanticFusion).
const (
	FuseRRF   = "rrf"   // reciprocal rank fusion of the two rankings
	FuseBlend = "blend" // a linear blend of max-normalised scores
)

// semanticBox holds the stage (atomic: SetSemantic may race with searches).
type semanticBox struct{ s Semantic }

// SetSemantic installs (or, with nil, removes) the semantic stage. Call it
// before the first Replace: documents indexed earlier are not replayed.
func (ix *Index) SetSemantic(s Semantic) {
	if s == nil {
		ix.sem.Store(nil)
		return
	}
	ix.sem.Store(&semanticBox{s})
}

// semanticFor is the stage a search asks and the weight its ranking is
// fused at: nil when there is none, or when a Weigher says the lexical
// ranking alone is best.
func (ix *Index) semanticFor() (Semantic, float64) {
	s := ix.Semantic()
	if s == nil {
		return nil, 0
	}
	w := ix.cfg.SemanticWeight
	if sw, ok := s.(Weigher); ok {
		if w = sw.FusionWeight(); w <= 0 {
			return nil, 0
		}
	}
	return s, w
}

// Semantic returns the semantic stage (nil: lexical ranking only).
func (ix *Index) Semantic() Semantic {
	if b := ix.sem.Load(); b != nil {
		return b.s
	}
	return nil
}

// fuseSemantic merges the lexical hits with the semantic ones by the
// configured method. Both lists are best first; the result is sorted by
// fused score, then ID.
func (ix *Index) fuseSemantic(lex, sem []Hit, w float64) []Hit {
	if len(sem) == 0 {
		return lex
	}
	type acc struct {
		h        Hit
		lex, sem float64
		inLex    bool
	}
	by := make(map[string]*acc, len(lex)+len(sem))
	order := make([]*acc, 0, len(lex)+len(sem))
	get := func(h Hit) *acc {
		a := by[h.ID]
		if a == nil {
			a = &acc{h: h}
			by[h.ID] = a
			order = append(order, a)
		}
		return a
	}
	switch ix.cfg.SemanticFusion {
	case FuseBlend:
		// Lexical scores over the best one; similarities over the best
		// one above the list's floor, so that both lie in [0, 1].
		var lmax float64
		if len(lex) > 0 {
			lmax = lex[0].Score
		}
		smax, smin := sem[0].Score, sem[len(sem)-1].Score
		for _, h := range lex {
			a := get(h)
			a.inLex = true
			if lmax > 0 {
				a.lex = h.Score / lmax
			}
		}
		for _, h := range sem {
			a := get(h)
			if smax > smin {
				a.sem = (h.Score - smin) / (smax - smin)
			} else {
				a.sem = 1
			}
		}
		for _, a := range order {
			a.h.Score = (1-w)*a.lex + w*a.sem
		}
	default: // FuseRRF
		k := ix.cfg.SemanticRRFK
		if k <= 0 {
			k = 60
		}
		for r, h := range lex {
			a := get(h)
			a.inLex = true
			a.lex = 1 / (k + float64(r+1))
		}
		for r, h := range sem {
			get(h).sem = w / (k + float64(r+1))
		}
		for _, a := range order {
			a.h.Score = a.lex + a.sem
		}
	}
	out := make([]Hit, len(order))
	for i, a := range order {
		out[i] = a.h
		if !a.inLex {
			out[i].Why = whySemantic
		} else if a.sem > 0 && out[i].Why != "" {
			out[i].Why += "; " + whySemantic
		}
	}
	slices.SortFunc(out, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// whySemantic explains a hit the semantic stage contributed.
const whySemantic = "similar in meaning (embeddings)"
