package index

import (
	"slices"
	"strings"
	"sync"
)

// The scoring core. A query is scored term by term (term-at-a-time) into
// dense accumulators, one per (document slot, sub-query), reused across
// queries through a sync.Pool. A term's per-document BM25F scores
// ("impacts") depend on the global statistics (document count, average
// field lengths, document frequencies), so they are cached per term and
// epoch: the first query that needs a term after a Replace or Remove
// computes them once, every later query only adds them up.

// maxSeed bounds the posting list that seeds a sub-query's collection.
const maxSeed = 512

// queryPaths forces the scoring core's internal paths, so that tests can
// check that every path ranks identically. It is part of the injected
// Config (unexported: not a ranking parameter); the zero value is automatic.
type queryPaths struct {
	mode   int  // 0 auto, modeDense, modeSparse
	noCut  bool // switch off the collection cut
	noSeed bool // switch off seeding the collection
}

const (
	modeDense = iota + 1
	modeSparse
)

type scored struct {
	slot  uint32
	score float64
}

// impactList is one term's scores under the statistics of one epoch.
type impactList struct {
	epoch uint64
	slots []uint32  // documents holding the term (with a non-zero score)
	c     []float64 // their saturated BM25F score for the term
	maxc  float64   // the largest of c
	psid  []int32   // providers holding the term (segment sids)
	pc    []float64 // their provider-stage BM25 score for the term
}

// normStats are the global statistics a term's scores depend on.
type normStats struct {
	N, P, avgP   float64
	normC, normK [NumFields]float64 // BM25F length normalisation: normC + normK*length
}

func (ix *Index) normStats() normStats {
	cfg := &ix.cfg
	ns := normStats{N: float64(ix.nDocs), P: float64(len(ix.segs))}
	for f := range NumFields {
		avg := ix.lenSum[f] / ns.N
		if avg <= 0 {
			avg = 1
		}
		ns.normC[f] = 1 - cfg.FieldB[f]
		ns.normK[f] = cfg.FieldB[f] / avg
	}
	ns.avgP = ix.provLen / ns.P
	if ns.avgP <= 0 {
		ns.avgP = 1
	}
	return ns
}

// fieldIDF returns the IDF that weighs the term's evidence in each field.
func (ix *Index) fieldIDF(ti *termInfo, ns *normStats) [NumFields]float64 {
	var fidf [NumFields]float64
	idf := bm25IDF(ns.N, float64(ti.df))
	for f := range NumFields {
		if ix.cfg.FieldIDF {
			fidf[f] = bm25IDF(ns.N, float64(ti.fdf[f]))
		} else {
			fidf[f] = idf
		}
	}
	return fidf
}

// postingScore is the BM25F score of one posting: field-weighted,
// length-normalised term frequency, saturated once; each field's share
// carries its IDF. ok is false when no weighted field holds the term.
func (ix *Index) postingScore(p *posting, lens *[NumFields]float32, ns *normStats, fidf *[NumFields]float64) (float64, bool) {
	cfg := &ix.cfg
	var tfw, evid float64
	for f := range NumFields {
		if p.tf[f] == 0 || cfg.FieldWeight[f] == 0 {
			continue
		}
		norm := ns.normC[f] + ns.normK[f]*float64(lens[f])
		x := cfg.FieldWeight[f] * float64(p.tf[f]) / norm
		tfw += x
		evid += x * fidf[f]
	}
	if tfw == 0 {
		return 0, false
	}
	k1 := cfg.K1
	return evid * (k1 + 1) / (k1 + tfw), true
}

// provScore is the provider-stage BM25 score of a provider document whose
// weight for the term is ptf.
func (ix *Index) provScore(ptf float64, seg *segment, pidf float64, ns *normStats) float64 {
	k1 := ix.cfg.K1
	tfn := ptf / (1 - 0.75 + 0.75*seg.plen/ns.avgP)
	return pidf * tfn * (k1 + 1) / (k1 + tfn)
}

// impacts returns the term's cached scores, computing them if the cache is
// stale. Called under the read lock; concurrent callers may compute the
// same list, which is harmless.
func (ix *Index) impacts(ti *termInfo, ns *normStats) *impactList {
	if il := ti.imp.Load(); il != nil && il.epoch == ix.epoch {
		return il
	}
	fidf := ix.fieldIDF(ti, ns)
	il := &impactList{epoch: ix.epoch, slots: make([]uint32, 0, ti.df), c: make([]float64, 0, ti.df)}
	var pidf float64
	if ix.cfg.ProviderWeight > 0 && ti.pdf > 0 {
		pidf = bm25IDF(ns.P, float64(ti.pdf))
	}
	for _, sr := range ti.segs {
		seg := sr.seg
		if pidf > 0 && sr.ptf > 0 {
			il.psid = append(il.psid, seg.sid)
			il.pc = append(il.pc, ix.provScore(sr.ptf, seg, pidf, ns))
		}
		for i := range sr.post {
			p := &sr.post[i]
			if c, ok := ix.postingScore(p, &seg.lens[p.doc], ns, &fidf); ok {
				il.slots = append(il.slots, seg.slots[p.doc])
				il.c = append(il.c, c)
				il.maxc = max(il.maxc, c)
			}
		}
	}
	ti.imp.Store(il)
	return il
}

// qterm is one weighted term of one sub-query.
type qterm struct {
	term string
	q    int32
	w    float64
}

// qweight is a sub-query's weight for the current term.
type qweight struct {
	q int
	w float64
}

// scratch is the per-query working memory, pooled.
type scratch struct {
	acc         []float64 // q*ns + slot: one column per sub-query
	ns          int       // the column length (slots) of this query
	seen        []bool    // slot touched by any sub-query
	touched     []uint32
	prov        []float64 // sid*nq + q
	provSeen    []bool
	provTouched []int32
	qterms      []qterm
	maxq        []float64  // per sub-query: the largest accumulator
	seeds       [][]uint32 // per sub-query: slots collected first
	segOrder    []segStage // providers in collection order
	seeded      []uint64   // slot -> bit q set when collected from seeds
	ws          []qweight
	groups      []termGroup
	tmark       []int32    // term id -> 1 + index in groups (name coverage)
	pairs       []wordPair // a sub-query's word pairs (phrase feature)
	nidf        []float64  // term id -> name IDF, valid when nidfGen == gen
	nidfGen     []uint32
	gen         uint32   // query generation of this scratch
	all         []uint32 // 0, 1, 2, ...: every slot, for dense collection
	fpos        []int32  // slot -> 1 + position in the fused list (fuseRRF)
	exp         expandBuf
	known       map[string]knownTerm // decompound: word -> its index term, if known
	dense       bool                 // accumulators filled densely: no touched list
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

func (sc *scratch) reset(nq, nslots, nsids int) {
	if len(sc.acc) < nq*nslots {
		sc.acc = make([]float64, nq*nslots)
	}
	sc.ns = nslots
	if len(sc.seen) < nslots {
		sc.seen = make([]bool, nslots)
	}
	if len(sc.prov) < nq*nsids {
		sc.prov = make([]float64, nq*nsids)
	}
	if len(sc.provSeen) < nsids {
		sc.provSeen = make([]bool, nsids)
	}
	sc.touched = sc.touched[:0]
	sc.provTouched = sc.provTouched[:0]
}

// clear zeroes what the last query touched.
func (sc *scratch) clear(nq, nslots int) {
	if sc.dense {
		clear(sc.acc[:nq*nslots])
		sc.dense = false
	}
	for _, s := range sc.touched {
		for q := range nq {
			sc.acc[q*sc.ns+int(s)] = 0
		}
		sc.seen[s] = false
	}
	for _, p := range sc.provTouched {
		clear(sc.prov[int(p)*nq : int(p)*nq+nq])
		sc.provSeen[p] = false
	}
}

// rank scores sub-queries in one pass over the postings of the union of
// their terms: BM25F over tool fields, fused with a BM25 ranking of
// providers. It returns, per sub-query, the best depth hits, best first.
func (ix *Index) rank(sc *scratch, subs []subQuery, o Options, depth int) [][]scored {
	cfg := &ix.cfg
	nq := len(subs)
	// The sub-queries' weighted terms, grouped by term.
	sc.qterms = sc.qterms[:0]
	if sc.known == nil {
		sc.known = map[string]knownTerm{}
	}
	clear(sc.known)
	for q := range subs {
		sq := &subs[q]
		terms := ix.lex.expandInto(&sc.exp, sq.base, cfg.AbbrevWeight, cfg.SynonymWeight, cfg.ExactWeight, cfg.QueryTFLog, cfg.LexiconPhrases)
		terms = mergeTerms(terms, sq.extra)
		if cfg.DecompoundWeight > 0 {
			terms = mergeTerms(terms, ix.decompoundMemo(sq.base, sc))
		}
		sq.terms = terms
		if cfg.AssocTerms > 0 && cfg.AssocWeight > 0 {
			if a := ix.associatedTerms(sq); len(a) > 0 {
				terms = mergeTerms(terms, a)
				sq.terms = terms
			}
		}
		for _, t := range terms {
			sc.qterms = append(sc.qterms, qterm{t.term, int32(q), t.weight})
		}
	}
	slices.SortFunc(sc.qterms, func(a, b qterm) int {
		if c := strings.Compare(a.term, b.term); c != 0 {
			return c
		}
		return int(a.q - b.q)
	})

	ns := ix.normStats()
	sc.reset(nq, len(ix.slots), len(ix.sids))
	defer sc.clear(nq, len(ix.slots))
	useProv := cfg.ProviderWeight > 0 && o.Provider == ""
	var only *segment // provider filter
	if o.Provider != "" {
		if only = ix.segs[o.Provider]; only == nil {
			return make([][]scored, nq)
		}
	}
	// Resolve the terms and their impacts; a query whose postings cover
	// most of the catalog is accumulated densely (no touched list) and
	// collected by a sequential scan.
	groups := sc.groups[:0]
	ws := sc.ws[:0]
	total := 0
	qt := sc.qterms
	for i := 0; i < len(qt); {
		j := i + 1
		for j < len(qt) && qt[j].term == qt[i].term {
			j++
		}
		from := len(ws)
		for _, x := range qt[i:j] {
			if x.w > 0 {
				ws = append(ws, qweight{int(x.q), x.w})
			}
		}
		ti := ix.terms[qt[i].term]
		i = j
		if ti == nil || ti.df == 0 || len(ws) == from {
			ws = ws[:from]
			continue
		}
		g := termGroup{ti: ti, from: int32(from), to: int32(len(ws))}
		if only == nil {
			g.il = ix.impacts(ti, &ns)
			total += len(g.il.slots)
		}
		groups = append(groups, g)
	}
	sc.groups, sc.ws = groups, ws
	// Seeds: per sub-query, the documents of its strongest short posting
	// list are collected first, so that its heap fills with good hits and
	// the collection cut rises early (the order does not change the result).
	sc.seeds = sc.seeds[:0]
	if only == nil {
		for q := range nq {
			best, bestW := -1, 0.0
			for gi, g := range groups {
				if len(g.il.slots) > maxSeed {
					continue
				}
				for _, x := range ws[g.from:g.to] {
					if x.q == q && x.w*g.il.maxc > bestW {
						best, bestW = gi, x.w*g.il.maxc
					}
				}
			}
			var seed []uint32
			if best >= 0 {
				seed = groups[best].il.slots
			}
			sc.seeds = append(sc.seeds, seed)
		}
	}
	if cfg.NameCoverage > 0 || cfg.PhraseWeight > 0 {
		if len(sc.tmark) < int(ix.nTID) {
			sc.tmark = make([]int32, ix.nTID)
			sc.nidf = make([]float64, ix.nTID)
			sc.nidfGen = make([]uint32, ix.nTID)
		}
		if sc.gen++; sc.gen == 0 { // wrapped: forget all stamps
			clear(sc.nidfGen)
			sc.gen = 1
		}
		for i := range groups {
			g := &groups[i]
			g.nameIDF = ix.nameIDF(g.ti)
			sc.tmark[g.ti.id] = int32(i) + 1
		}
		defer func() {
			for _, g := range groups {
				sc.tmark[g.ti.id] = 0
			}
		}()
	}
	nslots := len(ix.slots)
	switch ix.cfg.paths.mode {
	case modeDense:
		sc.dense = only == nil
	case modeSparse:
		sc.dense = false
	default:
		sc.dense = only == nil && total >= nslots/2
	}
	acc, seen, stride := sc.acc, sc.seen, sc.ns
	if cap(sc.maxq) < nq {
		sc.maxq = make([]float64, nq)
	}
	maxq := sc.maxq[:nq]
	clear(maxq)
	for _, g := range groups {
		ws := ws[g.from:g.to]
		if only != nil {
			ix.scoreSegment(sc, nq, g.ti, only, ws, o.Kind, &ns)
			continue
		}
		il := g.il
		if useProv {
			for k, sid := range il.psid {
				if !sc.provSeen[sid] {
					sc.provSeen[sid] = true
					sc.provTouched = append(sc.provTouched, sid)
				}
				row := sc.prov[int(sid)*nq:]
				for _, x := range ws {
					row[x.q] += x.w * il.pc[k]
				}
			}
		}
		c := il.c[:len(il.slots)]
		// Contributions are positive, so the running maximum of the
		// accumulators is their final maximum (collect needs it).
		switch {
		case sc.dense && len(ws) == 1:
			q, w := ws[0].q, ws[0].w
			m := maxq[q]
			for k, slot := range il.slots {
				i := q*stride + int(slot)
				v := acc[i] + w*c[k]
				acc[i] = v
				if v > m {
					m = v
				}
			}
			maxq[q] = m
		case sc.dense && len(ws) == 2:
			q0, w0, q1, w1 := ws[0].q, ws[0].w, ws[1].q, ws[1].w
			m0, m1 := maxq[q0], maxq[q1]
			a0, a1 := acc[q0*stride:q0*stride+stride], acc[q1*stride:q1*stride+stride]
			for k, slot := range il.slots {
				v0 := a0[slot] + w0*c[k]
				v1 := a1[slot] + w1*c[k]
				a0[slot], a1[slot] = v0, v1
				if v0 > m0 {
					m0 = v0
				}
				if v1 > m1 {
					m1 = v1
				}
			}
			maxq[q0], maxq[q1] = m0, m1
		default:
			for k, slot := range il.slots {
				if !sc.dense && !seen[slot] {
					seen[slot] = true
					sc.touched = append(sc.touched, slot)
				}
				for _, x := range ws {
					i := x.q*stride + int(slot)
					v := acc[i] + x.w*c[k]
					acc[i] = v
					if v > maxq[x.q] {
						maxq[x.q] = v
					}
				}
			}
		}
	}
	// With a kind filter over all providers, the maximum must skip the
	// other kinds: collect computes it.
	return ix.collect(sc, subs, useProv, o.Kind, depth, only != nil || o.Kind == "")
}

// termGroup is one distinct query term: its entry, its impacts and its
// sub-query weights (scratch.ws[from:to]).
type termGroup struct {
	ti       *termInfo
	il       *impactList
	from, to int32
	nameIDF  float64 // the term's IDF among tool names
}

// scoreSegment scores one term over a single provider's postings (a
// provider-filtered search), computing the scores directly.
func (ix *Index) scoreSegment(sc *scratch, nq int, ti *termInfo, seg *segment, ws []qweight, kind string, ns *normStats) {
	var post []posting
	for _, sr := range ti.segs {
		if sr.seg == seg {
			post = sr.post
			break
		}
	}
	if post == nil {
		return
	}
	fidf := ix.fieldIDF(ti, ns)
	for i := range post {
		p := &post[i]
		if kind != "" && seg.docs[p.doc].kind != kind {
			continue
		}
		c, ok := ix.postingScore(p, &seg.lens[p.doc], ns, &fidf)
		if !ok {
			continue
		}
		slot := seg.slots[p.doc]
		if !sc.seen[slot] {
			sc.seen[slot] = true
			sc.touched = append(sc.touched, slot)
		}
		for _, x := range ws {
			i := x.q*sc.ns + int(slot)
			v := sc.acc[i] + x.w*c
			sc.acc[i] = v
			if v > sc.maxq[x.q] {
				sc.maxq[x.q] = v
			}
		}
	}
}

// collect turns each sub-query's accumulators into its best depth hits.
// Base score: the tool score normalised by the best one, plus the provider
// stage. The name-coverage feature (at most cfg.NameCoverage) is then
// computed for the best candidates only, which keeps long queries over
// large catalogs cheap.
func (ix *Index) collect(sc *scratch, subs []subQuery, useProv bool, kind string, depth int, maxKnown bool) [][]scored {
	cfg := &ix.cfg
	nq := len(subs)
	acc, ns := sc.acc, sc.ns
	// Candidates: every slot (dense) or the touched ones.
	cands := sc.touched
	if sc.dense {
		for len(sc.all) < len(ix.slots) {
			sc.all = append(sc.all, uint32(len(sc.all)))
		}
		cands = sc.all[:len(ix.slots)]
	}
	maxFlat := sc.maxq[:nq]
	maxProv := make([]float64, nq)
	if !maxKnown {
		clear(maxFlat)
		for _, s := range cands {
			if kind != "" && ix.slotSid[s] >= 0 && ix.kindOf(s) != kind {
				continue
			}
			for q := range nq {
				maxFlat[q] = max(maxFlat[q], acc[q*ns+int(s)])
			}
		}
	}
	// provTop[q] bounds the provider stage of sub-query q.
	provTop := make([]float64, nq)
	if useProv {
		for _, p := range sc.provTouched {
			row := sc.prov[int(p)*nq : int(p)*nq+nq]
			for q, v := range row {
				maxProv[q] = max(maxProv[q], v)
			}
		}
		// The provider stage of each provider, computed once.
		for _, p := range sc.provTouched {
			row := sc.prov[int(p)*nq : int(p)*nq+nq]
			for q, v := range row {
				if maxProv[q] > 0 {
					row[q] = cfg.ProviderWeight * v / maxProv[q]
					provTop[q] = max(provTop[q], row[q])
				}
			}
		}
	}
	rerank := cfg.NameCoverage > 0 || cfg.PhraseWeight > 0 || cfg.ActionWeight > 0
	keep := depth
	if rerank {
		keep = depth + depth/2
	}
	heaps := make([]topHeap, nq)
	// cut[q]: once sub-query q's heap is full, an accumulator below it
	// cannot enter (a conservative bound that skips the exact score).
	cut := make([]float64, nq)
	for q := range heaps {
		heaps[q] = topHeap{ix: ix, items: make([]scored, 0, keep)}
	}
	newCut := func(q int) float64 {
		// v < cut implies v/maxFlat + provTop < root*(1-1e-9): the exact
		// score, rounding included, stays below the root.
		if ix.cfg.paths.noCut {
			return 0
		}
		return (heaps[q].items[0].score*(1-1e-9) - provTop[q]) * maxFlat[q] * (1 - 1e-12)
	}
	seeding := len(sc.seeds) == nq && nq <= 64 && !ix.cfg.paths.noSeed
	if seeding {
		if len(sc.seeded) < len(ix.slots) {
			sc.seeded = make([]uint64, len(ix.slots))
		}
		for q, seed := range sc.seeds {
			h := &heaps[q]
			for _, s := range seed {
				v := acc[q*ns+int(s)]
				if v == 0 || (kind != "" && ix.kindOf(s) != kind) {
					continue
				}
				sc.seeded[s] |= 1 << q
				score := v / maxFlat[q]
				if useProv && maxProv[q] > 0 {
					score += sc.prov[int(ix.slotSid[s])*nq+q]
				}
				h.push(scored{s, score}, keep)
			}
			if len(h.items) == keep {
				cut[q] = newCut(q)
			}
		}
		defer func() {
			for _, seed := range sc.seeds {
				for _, s := range seed {
					sc.seeded[s] = 0
				}
			}
		}()
	}
	if kind == "" && sc.dense && useProv {
		// Provider by provider, best provider stage first: the heap
		// fills with strong hits early, and each provider's cut uses its
		// own provider stage (much tighter than provTop).
		for q := range nq {
			h := &heaps[q]
			mf, bit := maxFlat[q], uint64(1)<<q
			// The best providers first (any order gives the same result;
			// this one makes the cut tight early).
			order := sc.segOrder[:0]
			for _, seg := range ix.sids {
				if seg == nil {
					continue
				}
				var p float64
				if maxProv[q] > 0 {
					p = sc.prov[int(seg.sid)*nq+q]
				}
				order = append(order, segStage{seg, p})
			}
			bestFirst(order, 16)
			sc.segOrder = order
			col := acc[q*ns : q*ns+ns]
			for _, ss := range order {
				seg, p := ss.seg, ss.p
				cp := ix.cutFor(h, keep, p, mf)
				for _, s := range seg.slots {
					v := col[s]
					if v == 0 || v < cp || (seeding && sc.seeded[s]&bit != 0) {
						continue
					}
					score := v / mf
					if maxProv[q] > 0 {
						score += p
					}
					if len(h.items) == keep && score < h.items[0].score {
						continue
					}
					h.push(scored{s, score}, keep)
					if len(h.items) == keep {
						cp = ix.cutFor(h, keep, p, mf)
					}
				}
			}
		}
		cands = nil // done
	}
	if kind == "" {
		// Column by column: a tight loop per sub-query with its cut in
		// a register.
		for q := range nq {
			h := &heaps[q]
			c, mf, bit := cut[q], maxFlat[q], uint64(1)<<q
			prov := useProv && maxProv[q] > 0
			col := acc[q*ns : q*ns+ns]
			for _, s := range cands {
				v := col[s]
				if v == 0 || v < c || (seeding && sc.seeded[s]&bit != 0) {
					continue
				}
				score := v / mf
				if prov {
					score += sc.prov[int(ix.slotSid[s])*nq+q]
				}
				if len(h.items) == keep {
					if score < h.items[0].score {
						continue
					}
					h.push(scored{s, score}, keep)
					c = newCut(q)
					continue
				}
				h.push(scored{s, score}, keep)
				if len(h.items) == keep {
					c = newCut(q)
				}
			}
			cut[q] = c
		}
		cands = nil // done
	}
	for _, s := range cands {
		filtered := false
		var done uint64
		if seeding {
			done = sc.seeded[s]
		}
		for q := range nq {
			v := acc[q*ns+int(s)]
			if v == 0 || v < cut[q] || (done != 0 && done&(1<<q) != 0) {
				continue
			}
			if !filtered {
				if kind != "" && ix.kindOf(s) != kind {
					break
				}
				filtered = true
			}
			score := v / maxFlat[q]
			if useProv && maxProv[q] > 0 {
				score += sc.prov[int(ix.slotSid[s])*nq+q]
			}
			h := &heaps[q]
			if len(h.items) == keep {
				if score < h.items[0].score {
					continue
				}
				h.push(scored{s, score}, keep)
				cut[q] = newCut(q)
				continue
			}
			h.push(scored{s, score}, keep)
			if len(h.items) == keep {
				cut[q] = newCut(q)
			}
		}
	}
	out := make([][]scored, nq)
	for q := range heaps {
		h := &heaps[q]
		if !rerank {
			out[q] = h.sorted()
			continue
		}
		cands := h.items
		h2 := &topHeap{ix: ix, items: make([]scored, 0, depth)}
		pairs := ix.queryPairs(sc, &subs[q])
		for _, c := range cands {
			ref := ix.slots[c.slot]
			de := &ref.seg.docs[ref.i]
			if cfg.NameCoverage > 0 {
				c.score += cfg.NameCoverage * ix.nameCoverage(sc, de, q)
			}
			if len(pairs) > 0 {
				c.score += cfg.PhraseWeight * phraseShare(sc, pairs, de.seq)
			}
			if cfg.ActionWeight > 0 {
				if qa := subs[q].actions; qa != 0 && de.actions != 0 && qa&de.actions == 0 {
					c.score -= cfg.ActionWeight
				}
			}
			h2.push(c, depth)
		}
		out[q] = h2.sorted()
	}
	return out
}

func (ix *Index) nameIDF(ti *termInfo) float64 {
	return bm25IDF(float64(ix.nDocs), float64(ti.fdf[FieldName]))
}

// nameCoverage is the IDF-weighted share of a tool name's terms found among
// sub-query q's terms (each counted at its query weight, at most 1).
func (ix *Index) nameCoverage(sc *scratch, de *docEntry, q int) float64 {
	var have, all float64
	for j, id := range de.nameIDs {
		gi := sc.tmark[id] - 1
		if gi < 0 {
			// Memoised for the query: names share their words.
			if sc.nidfGen[id] != sc.gen {
				sc.nidfGen[id] = sc.gen
				sc.nidf[id] = ix.nameIDF(de.nameTI[j])
			}
			all += sc.nidf[id]
			continue
		}
		g := &sc.groups[gi]
		all += g.nameIDF
		var w float64
		for _, x := range sc.ws[g.from:g.to] {
			if x.q == q {
				w = min(1, x.w)
			}
		}
		have += g.nameIDF * w
	}
	if all == 0 {
		return 0
	}
	return have / all
}

func (ix *Index) kindOf(slot uint32) string {
	ref := ix.slots[slot]
	return ref.seg.docs[ref.i].kind
}

// wordPair is an adjacent pair of a request's words (term ids) and its
// weight (the smaller IDF of the two).
type wordPair struct {
	a, b int32
	w    float64
}

// queryPairs returns sub-query sq's adjacent word pairs whose words are both
// indexed; the last pair's w is the total weight... see phraseShare.
func (ix *Index) queryPairs(sc *scratch, sq *subQuery) []wordPair {
	if ix.cfg.PhraseWeight <= 0 {
		return nil
	}
	sc.pairs = sc.pairs[:0]
	var prev *termInfo
	for _, t := range sq.base {
		if isAuxTerm(t) {
			continue
		}
		ti := ix.terms[t]
		if ti != nil && ti.df == 0 {
			ti = nil
		}
		if prev != nil && ti != nil && prev != ti {
			N := float64(ix.nDocs)
			w := min(bm25IDF(N, float64(prev.df)), bm25IDF(N, float64(ti.df)))
			if !slices.ContainsFunc(sc.pairs, func(p wordPair) bool { return p.a == prev.id && p.b == ti.id }) {
				sc.pairs = append(sc.pairs, wordPair{prev.id, ti.id, w})
			}
		}
		prev = ti
	}
	return sc.pairs
}

// phraseShare is the weighted share of the pairs found adjacent in seq.
// Query terms are marked in sc.tmark, which filters seq cheaply.
func phraseShare(sc *scratch, pairs []wordPair, seq []int32) float64 {
	var total, have float64
	for _, p := range pairs {
		total += p.w
	}
	if total == 0 || len(seq) < 2 {
		return 0
	}
	var found uint64 // pairs already counted (the first 64)
	for i := 0; i+1 < len(seq); i++ {
		a, b := seq[i], seq[i+1]
		if a < 0 || b < 0 || sc.tmark[a] == 0 || sc.tmark[b] == 0 {
			continue
		}
		for k, p := range pairs {
			if p.a == a && p.b == b {
				if k < 64 {
					if found&(1<<k) != 0 {
						break
					}
					found |= 1 << k
				}
				have += p.w
				break
			}
		}
	}
	return have / total
}

// cutFor is the accumulator below which a document whose provider stage is
// p cannot enter heap h (full at keep): v < cut implies v/mf + p <
// root*(1-1e-9), the exact score staying below the root, rounding included.
func (ix *Index) cutFor(h *topHeap, keep int, p, mf float64) float64 {
	if ix.cfg.paths.noCut || len(h.items) < keep {
		return 0
	}
	return (h.items[0].score*(1-1e-9) - p) * mf * (1 - 1e-12)
}

// segStage is a provider and its (normalised, weighted) provider stage.
type segStage struct {
	seg *segment
	p   float64
}

// bestFirst moves the k providers with the largest stage to the front of
// order, best first; the others keep their relative order.
func bestFirst(order []segStage, k int) {
	k = min(k, len(order))
	for i := range k {
		b := i
		for j := i + 1; j < len(order); j++ {
			if order[j].p > order[b].p {
				b = j
			}
		}
		if b != i {
			x := order[b]
			copy(order[i+1:b+1], order[i:b])
			order[i] = x
		}
	}
}
