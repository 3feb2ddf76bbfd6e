package index

import (
	"fmt"
	"strings"
	"unicode"
)

// Calibration of the semantic stage: before its ranking is trusted, a model
// is measured on the catalog itself, label-free, by held-out self-retrieval.
//
// Each tool is reduced to its name, parameter names and provider (the
// calibration document, which both rankings index); its description and its
// parameters' descriptions are held out and become queries for that tool.
// Neither ranking has seen a query's words in its target, so the check
// measures what a real request needs — finding a tool from other words than
// its own — and favours neither side: a query copied from text the
// lexical index holds would favour BM25 (it matches every word), and one the
// model embedded as part of the tool's text would favour the model (a
// near-duplicate vector). A model that knows nothing (noise vectors) ranks
// the targets at random and loses; one that relates words the tool's name
// does not share with its description wins.
//
// The lexical ranking alone, the model alone and their fusion at each of
// CalibrationWeights are scored by R@1, R@5 and MRR over the queries; the
// weight chosen is the best fusion that is no worse than the lexical ranking
// on any of the three (within CalibrationTolerance) and better on their mean
// by CalibrationMinGain, else 0: the lexical ranking alone.

// CalibrationWeights are the fusion weights the self-check tries, besides 0
// (the lexical ranking alone).
var CalibrationWeights = []float64{0.1, 0.2, 0.3, 0.5, 0.7, 1}

const (
	// CalibrationTolerance: a fused ranking may trail the lexical one by
	// this much on R@1, R@5 or MRR (ties within one query's worth of noise).
	CalibrationTolerance = 0.005
	// CalibrationMinGain: the mean gain over R@1, R@5 and MRR a fusion needs
	// over the lexical ranking to be chosen.
	CalibrationMinGain = 0.01
	// CalibrationMinQueries: with fewer queries the check decides nothing
	// and the lexical ranking is kept.
	CalibrationMinQueries = 20
)

// CalQuery is one self-retrieval query: text held out from Target's
// calibration document.
type CalQuery struct {
	Text   string
	Target string // the document ID it should find
}

// Figures are one ranking's self-check scores.
type Figures struct {
	R1, R5, MRR float64
}

func (f Figures) mean() float64 { return (f.R1 + f.R5 + f.MRR) / 3 }

func (f Figures) String() string { return fmt.Sprintf("R@1 %.3f R@5 %.3f MRR %.3f", f.R1, f.R5, f.MRR) }

// WeightFigures are the fused ranking's figures at one weight.
type WeightFigures struct {
	Weight float64
	Figures
}

// Calibration is the outcome of the self-check.
type Calibration struct {
	Docs, Queries int
	Lexical       Figures
	Model         Figures
	Fused         []WeightFigures // one per weight tried
	Weight        float64         // chosen: 0 = the lexical ranking alone
}

// Summary is the one line doctor and runtime_status show.
func (c Calibration) Summary() string {
	choice := "lexical ranking alone"
	best := c.Lexical
	for _, f := range c.Fused {
		if f.Weight == c.Weight {
			choice, best = fmt.Sprintf("fusion weight %g", c.Weight), f.Figures
		}
	}
	return fmt.Sprintf("self-check on %d held-out queries over %d tools: lexical %s; model %s; chosen %s (%s)",
		c.Queries, c.Docs, c.Lexical, c.Model, choice, best)
}

// CalibrationDocs reduces a document to what the self-check indexes (name,
// parameter names, provider) and returns the queries held out from it:
// the description's first sentences and the parameters' descriptions, each
// at most maxCalWords words, when they have at least three.
func CalibrationDocs(d Doc) (Doc, []CalQuery) {
	r := Doc{ID: d.ID, Kind: d.Kind, Provider: d.Provider, ProviderDescription: d.ProviderDescription, Name: d.Name}
	var pdesc []string
	for _, p := range d.Params {
		r.Params = append(r.Params, Param{Name: p.Name})
		if p.Description != "" {
			pdesc = append(pdesc, p.Description)
		}
	}
	var qs []CalQuery
	for _, t := range []string{d.Description, strings.Join(pdesc, "; ")} {
		if t = clipWords(t, maxCalWords); countWords(t) >= 3 {
			qs = append(qs, CalQuery{Text: t, Target: d.ID})
		}
	}
	return r, qs
}

const maxCalWords = 32

// clipWords keeps text's first n words (whitespace-separated; a run of Han
// characters counts one word per two characters).
func clipWords(text string, n int) string {
	f := strings.Fields(text)
	out := f[:0:0]
	words := 0
	for _, w := range f {
		words += wordCount(w)
		if words > n && len(out) > 0 {
			break
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

func countWords(text string) int {
	n := 0
	for _, w := range strings.Fields(text) {
		n += wordCount(w)
	}
	return n
}

func wordCount(w string) int {
	han := 0
	for _, r := range w {
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	if han > 0 {
		return max(1, han/2)
	}
	return 1
}

// Calibrate runs the self-check over this index, which holds the
// calibration documents (CalibrationDocs) and no semantic stage: model(i,
// k) is the model's ranking for queries[i] over the same documents (its
// best k, nil when it has none). Weights are tried in order (nil:
// CalibrationWeights).
func (ix *Index) Calibrate(queries []CalQuery, model func(i, k int) []Hit, weights []float64) Calibration {
	if weights == nil {
		weights = CalibrationWeights
	}
	depth := fuseDepth
	if ix.cfg.SemanticDepth > 0 {
		depth = ix.cfg.SemanticDepth
	}
	c := Calibration{Docs: ix.Len(), Queries: len(queries)}
	fused := make([]Figures, len(weights))
	for i, q := range queries {
		lex := ix.searchLexical(q.Text, Options{}, depth)
		sem := model(i, depth)
		c.Lexical.add(lex, q.Target)
		c.Model.add(sem, q.Target)
		for j, w := range weights {
			fused[j].add(ix.fuseSemantic(lex, sem, w), q.Target)
		}
	}
	n := float64(max(1, len(queries)))
	c.Lexical.div(n)
	c.Model.div(n)
	// Eligible: no worse than lexical on any figure, better on the mean by
	// CalibrationMinGain. Of those, the lightest weight within
	// CalibrationTolerance of the best mean: the self-check is a proxy, so
	// the model gets no more say than it has earned.
	floor, top := c.Lexical.mean()+CalibrationMinGain, -1.0
	var ok []bool
	for j, w := range weights {
		fused[j].div(n)
		f := fused[j]
		c.Fused = append(c.Fused, WeightFigures{w, f})
		tol := CalibrationTolerance
		e := len(queries) >= CalibrationMinQueries && w > 0 && f.mean() >= floor &&
			f.R1 >= c.Lexical.R1-tol && f.R5 >= c.Lexical.R5-tol && f.MRR >= c.Lexical.MRR-tol
		ok = append(ok, e)
		if e {
			top = max(top, f.mean())
		}
	}
	lightest := -1.0
	for j, f := range c.Fused {
		if ok[j] && f.mean() >= top-CalibrationTolerance && (lightest < 0 || f.Weight < lightest) {
			lightest = f.Weight
		}
	}
	if lightest > 0 {
		c.Weight = lightest
	}
	return c
}

func (f *Figures) add(hits []Hit, target string) {
	for r, h := range hits {
		if h.ID != target {
			continue
		}
		if r == 0 {
			f.R1++
		}
		if r < 5 {
			f.R5++
		}
		f.MRR += 1 / float64(r+1)
		return
	}
}

func (f *Figures) div(n float64) {
	f.R1 /= n
	f.R5 /= n
	f.MRR /= n
}
