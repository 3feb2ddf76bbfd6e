package index

import (
	"slices"
	"strings"
)

// Pseudo-relevance feedback (RM3-style): each sub-query is ranked once, the
// terms that best characterise its top Config.PRFDocs documents (weighted
// term frequency in those documents times IDF, computed from the catalog
// itself) are added to it at up to Config.PRFWeight, and everything is
// ranked again. Off when Config.PRFTerms is 0; only then does the index keep
// the per-document term lists it needs.

// fwdTerm is one term of a document's forward list.
type fwdTerm struct {
	ti *termInfo
	w  float32 // field-weighted term frequency
}

// buildForward fills seg.fwd from its postings, each list sorted by term.
func (ix *Index) buildForward(seg *segment) {
	type tw struct {
		term string
		w    float32
	}
	lists := make([][]tw, len(seg.docs))
	for t, ps := range seg.post {
		if isAuxTerm(t) {
			continue
		}
		for _, p := range ps {
			var w float64
			for f := range FieldProvider { // the provider field says nothing of the tool
				w += ix.cfg.FieldWeight[f] * float64(p.tf[f])
			}
			if w > 0 {
				lists[p.doc] = append(lists[p.doc], tw{t, float32(w)})
			}
		}
	}
	seg.fwd = make([][]fwdTerm, len(seg.docs))
	for i, l := range lists {
		slices.SortFunc(l, func(a, b tw) int { return strings.Compare(a.term, b.term) })
		f := make([]fwdTerm, len(l))
		for j, x := range l {
			f[j] = fwdTerm{ix.terms[x.term], x.w}
		}
		seg.fwd[i] = f
	}
}

// feedbackTerms returns the expansion terms of one sub-query from its top
// documents (best first).
func (ix *Index) feedbackTerms(sq *subQuery, top []scored) []expansion {
	cfg := &ix.cfg
	if len(top) > cfg.PRFDocs {
		top = top[:cfg.PRFDocs]
	}
	have := make(map[string]bool, len(sq.terms))
	for _, t := range sq.terms {
		have[t.term] = true
	}
	N := float64(ix.nDocs)
	weight := map[*termInfo]float64{}
	var order []*termInfo
	for r, s := range top {
		ref := ix.slots[s.slot]
		if ref.seg.fwd == nil {
			continue
		}
		fwd := ref.seg.fwd[ref.i]
		var total float64
		for _, ft := range fwd {
			total += float64(ft.w)
		}
		if total == 0 {
			continue
		}
		dw := 1 / float64(r+1) // documents weigh by rank
		for _, ft := range fwd {
			if _, ok := weight[ft.ti]; !ok {
				order = append(order, ft.ti)
			}
			weight[ft.ti] += dw * float64(ft.w) / total
		}
	}
	type cand struct {
		term string
		w    float64
	}
	var cands []cand
	for _, ti := range order {
		term := ix.termOf(ti)
		if term == "" || have[term] || ti.df < 2 { // a term of one document only says nothing new
			continue
		}
		cands = append(cands, cand{term, weight[ti] * bm25IDF(N, float64(ti.df))})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return strings.Compare(a.term, b.term)
	})
	if len(cands) > cfg.PRFTerms {
		cands = cands[:cfg.PRFTerms]
	}
	out := make([]expansion, 0, len(cands))
	for _, c := range cands {
		out = append(out, expansion{c.term, cfg.PRFWeight * c.w / cands[0].w})
	}
	return out
}

// Term association (Config.AssocTerms > 0): each rare request word (in at
// most Config.AssocMaxDF documents) also brings the AssocTerms terms that
// co-occur with it most distinctively in the catalog (share of the word's
// documents holding the term, times the term's IDF), at up to AssocWeight.
// Mined from the same per-document term lists as feedback.
func (ix *Index) associatedTerms(sq *subQuery) []expansion {
	cfg := &ix.cfg
	have := make(map[string]bool, len(sq.terms))
	for _, t := range sq.terms {
		have[t.term] = true
	}
	N := float64(ix.nDocs)
	best := map[string]float64{}
	seen := map[string]bool{}
	for _, t := range sq.base {
		if isAuxTerm(t) || seen[t] {
			continue
		}
		seen[t] = true
		ti := ix.terms[t]
		if ti == nil || ti.df == 0 || ti.df > cfg.AssocMaxDF {
			continue
		}
		cnt := map[*termInfo]float64{}
		var order []*termInfo
		for _, sr := range ti.segs {
			if sr.seg.fwd == nil {
				continue
			}
			for _, p := range sr.post {
				for _, ft := range sr.seg.fwd[p.doc] {
					if _, ok := cnt[ft.ti]; !ok {
						order = append(order, ft.ti)
					}
					cnt[ft.ti]++
				}
			}
		}
		type cand struct {
			term string
			w    float64
		}
		var cands []cand
		for _, u := range order {
			if u == ti || have[u.term] || u.df < 2 {
				continue
			}
			cands = append(cands, cand{u.term, cnt[u] / float64(ti.df) * bm25IDF(N, float64(u.df))})
		}
		slices.SortFunc(cands, func(a, b cand) int {
			switch {
			case a.w > b.w:
				return -1
			case a.w < b.w:
				return 1
			}
			return strings.Compare(a.term, b.term)
		})
		if len(cands) > cfg.AssocTerms {
			cands = cands[:cfg.AssocTerms]
		}
		for _, c := range cands {
			w := cfg.AssocWeight * c.w / cands[0].w
			if w > best[c.term] {
				best[c.term] = w
			}
		}
	}
	out := make([]expansion, 0, len(best))
	for t, w := range best {
		out = append(out, expansion{t, w})
	}
	slices.SortFunc(out, func(a, b expansion) int { return strings.Compare(a.term, b.term) })
	return out
}
