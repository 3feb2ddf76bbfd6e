package embedding

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/tests/embedtest"
)

// fakeEmbedder computes the fake vectors in process (no HTTP), so that the
// benchmarks measure the stage itself.
type fakeEmbedder struct{}

func (fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = embedtest.Vector(t)
	}
	return out, nil
}

// BenchmarkSearch10k: lexical search of a 10,000-tool index against the
// same search fused with the semantic stage (in-process fake embedder,
// 256 dimensions, query vectors cached after the first pass), side by side.
func BenchmarkSearch10k(b *testing.B) {
	verbs := []string{"list", "get", "create", "update", "delete", "search", "export", "sync"}
	nouns := []string{"issue", "invoice", "customer", "deployment", "report", "ticket", "document", "order", "dataset", "alert"}
	docs := map[string][]index.Doc{}
	var order []string
	for i := range 10_000 {
		p := fmt.Sprintf("svc%03d", i/50)
		if len(docs[p]) == 0 {
			order = append(order, p)
		}
		v, n := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		docs[p] = append(docs[p], index.Doc{ID: fmt.Sprintf("%s.%s_%s_%d", p, v, n, i), Name: fmt.Sprintf("%s_%s_%d", v, n, i),
			Description: fmt.Sprintf("%s a %s by its identifier, with filters for status %d and owner.", v, n, i%97)})
	}
	queries := []string{"list open invoices", "delete a deployment", "export the customer report", "search tickets by owner", "sync alerts"}
	for _, withSem := range []bool{false, true} {
		name := "lexical"
		if withSem {
			name = "fused"
		}
		b.Run(name, func(b *testing.B) {
			ix := index.New()
			var st *Store
			if withSem {
				w := 1.0 // the fusion's cost, whatever a self-check would choose
				st = NewStore(fakeEmbedder{}, Options{Model: "fake", BatchSize: 512, Weight: &w})
				defer st.Close()
				ix.SetSemantic(st)
			}
			for _, p := range order {
				ix.Replace(p, docs[p])
			}
			if st != nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := st.Sync(ctx); err != nil {
					b.Fatal(err)
				}
			}
			for _, q := range queries {
				ix.Search(q, index.Options{})
			}
			i := 0
			for b.Loop() {
				ix.Search(queries[i%len(queries)], index.Options{})
				i++
			}
		})
	}
}

// BenchmarkSelfCheck10k: the self-check at 10,000 tools (400 sampled), with
// an empty cache each time: embedding its texts with the in-process fake,
// the calibration index, and ranking every held-out query eight ways.
func BenchmarkSelfCheck10k(b *testing.B) {
	verbs := []string{"list", "get", "create", "update", "delete", "search", "export", "sync"}
	nouns := []string{"issue", "invoice", "customer", "deployment", "report", "ticket", "document", "order", "dataset", "alert"}
	st := NewStore(fakeEmbedder{}, Options{Model: "fake", BatchSize: 512, CalibrationDelay: time.Millisecond})
	defer st.Close()
	ix := index.New()
	ix.SetSemantic(st)
	for p := range 200 {
		var docs []index.Doc
		for j := range 50 {
			i := p*50 + j
			v, n := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
			docs = append(docs, index.Doc{ID: fmt.Sprintf("svc%03d.%s_%s_%d", p, v, n, i), Name: fmt.Sprintf("%s_%s_%d", v, n, i),
				Description: fmt.Sprintf("%s a %s by its identifier, with filters for status %d and owner.", v, n, i%97),
				Params:      []index.Param{{Name: "id", Description: "The " + n + " identifier to " + v + "."}}})
		}
		ix.Replace(fmt.Sprintf("svc%03d", p), docs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	st.mu.RLock()
	sample := st.calSample()
	st.mu.RUnlock()
	for b.Loop() {
		st.opts.Cache, _ = OpenCache("") // no cached outcome: the whole check
		if _, err := st.calibrate(sample); err != nil {
			b.Fatal(err)
		}
	}
}
