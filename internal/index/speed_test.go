package index

import (
	"fmt"
	"reflect"
	"testing"
)

// TestCachedImpactsFollowUpdates: term scores are cached per epoch of the
// global statistics; after any Replace or Remove, queries must rank exactly
// as on an index freshly built with the same content.
func TestCachedImpactsFollowUpdates(t *testing.T) {
	order, by := synthCatalog(600)
	qs := synthQueries(60)
	ix := buildSynth(order, by)
	warm := func() {
		for _, q := range qs {
			ix.Search(q, Options{Limit: 20})
		}
	}
	check := func(step string, content map[string][]Doc) {
		t.Helper()
		fresh := New()
		for _, p := range order {
			if docs, ok := content[p]; ok && len(docs) > 0 {
				fresh.Replace(p, docs)
			}
		}
		for i, q := range qs {
			o := Options{Limit: 20}
			if i%4 == 3 {
				o.Provider = order[i%len(order)]
			}
			if a, b := ix.Search(q, o), fresh.Search(q, o); !reflect.DeepEqual(ids(a), ids(b)) {
				t.Fatalf("%s: %q ranks differently from a fresh index:\n%v\n%v", step, q, ids(a), ids(b))
			}
		}
	}
	content := map[string][]Doc{}
	for p, d := range by {
		content[p] = d
	}
	warm()
	check("initial", content)

	// Replace one provider with another provider's tools (renamed).
	p0, p1 := order[0], order[1]
	var moved []Doc
	for i, d := range by[p1] {
		d.ID = fmt.Sprintf("%s.moved%d", p0, i)
		d.Provider = p0
		moved = append(moved, d)
	}
	warm()
	ix.Replace(p0, moved)
	content[p0] = moved
	check("after Replace", content)

	warm()
	ix.Remove(p1)
	delete(content, p1)
	check("after Remove", content)

	warm()
	ix.Replace(p1, by[p1])
	content[p1] = by[p1]
	check("after re-adding", content)
}

// TestSearchAllocations keeps the query path lean: the per-query working
// memory is pooled.
func TestSearchAllocations(t *testing.T) {
	order, by := synthCatalog(2000)
	ix := buildSynth(order, by)
	qs := synthQueries(30)
	for _, q := range qs {
		ix.Search(q, Options{Limit: 10})
	}
	allocs := testing.AllocsPerRun(20, func() {
		ix.Search(qs[2], Options{Limit: 10}) // a long multi-clause request
	})
	t.Logf("long query: %.0f allocations", allocs)
	if allocs > 600 {
		t.Errorf("long query allocates %.0f times", allocs)
	}
}

// TestFastPathsAgree: the dense and the sparse accumulation, and the
// collection with and without its pruning cut, rank identically, under the
// default configuration and with every optional technique on, on synthetic
// queries and (when present) on both retrieval data sets.
func TestFastPathsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	if raceEnabled {
		// One goroutine comparing rankings: nothing for the race detector
		// to find, and 40 s of its slowdown. scripts/test.sh runs it without.
		t.Skip("single-goroutine differential test: scripts/test.sh runs it once without -race")
	}
	for _, cfg := range []Config{DefaultConfig(), allOnConfig()} {
		for name, suite := range goldenSuites(t, cfg) {
			ix, cases := suite()
			run := func(p queryPaths) []string {
				ix.setPaths(p)
				var out []string
				for _, c := range cases {
					out = append(out, rankingKey(ix.Search(c.query, c.opts)))
				}
				return out
			}
			ref := run(queryPaths{mode: modeSparse, noCut: true, noSeed: true})
			for _, p := range []queryPaths{{modeDense, true, true}, {modeDense, false, true}, {modeDense, false, false},
				{modeSparse, false, false}, {0, true, false}, {0, false, false}} {
				got := run(p)
				for i := range ref {
					if got[i] != ref[i] {
						t.Fatalf("suite %s, %+v: %q ranks differently", name, p, cases[i].query)
					}
				}
			}
		}
	}
}

// setPaths changes this index's scoring paths (its injected Config), so
// that one built index can be searched through each path.
func (ix *Index) setPaths(p queryPaths) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.cfg.paths = p
}

// allOnConfig is the default configuration with every optional technique on.
func allOnConfig() Config {
	c := DefaultConfig()
	c.PhraseWeight = 0.4
	c.ActionWeight = 0.2
	c.LexiconPhrases = true
	c.ImpliedTime, c.ImpliedWrite, c.ImpliedWeb = 0.5, 1, 0.4
	c.PathTerms = 0.5
	c.PRFTerms, c.PRFDocs, c.PRFWeight = 5, 3, 0.3
	c.AssocTerms, c.AssocMaxDF, c.AssocWeight = 1, 5, 0.3
	c.ClauseSteps, c.ClauseVerbs, c.ClauseQuota = true, true, 1
	c.FieldWeight[FieldSummary], c.FieldB[FieldSummary] = 0.5, 0.75
	c.SegmentNames = true
	c.Diversity = 0.3
	return c
}

// TestLongRequestIsBounded: a request of thousands of clauses is ranked by
// at most maxClauses of them (the accumulators are per clause).
func TestLongRequestIsBounded(t *testing.T) {
	ix := sampleIndex()
	var b []byte
	for i := range 5000 {
		b = fmt.Appendf(b, "read file %d, ", i)
	}
	b = append(b, "then post a message to the channel"...)
	hs := ix.Search(string(b), Options{})
	if len(hs) == 0 {
		t.Fatal("no hits")
	}
	all := ix.analyzer()(nil, string(b))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if n := len(ix.subQueries(string(b), all)); n != maxClauses+1 {
		t.Errorf("%d sub-queries, want %d", n, maxClauses+1)
	}
}
