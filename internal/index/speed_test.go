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
