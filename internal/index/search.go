package index

import (
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// fuseDepth is how many hits of each partial ranking take part in fusion.
const fuseDepth = 50

type scored struct {
	slot  uint32
	score float64
}

type scratch struct {
	acc     [][]float64 // per sub-query accumulators, indexed by slot
	seen    []bool      // slot touched by any sub-query
	touched []uint32
	prov    []map[*segment]float64
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

func (sc *scratch) reset(nq, nslots int) {
	for len(sc.acc) < nq {
		sc.acc = append(sc.acc, nil)
		sc.prov = append(sc.prov, map[*segment]float64{})
	}
	for q := range nq {
		if len(sc.acc[q]) < nslots {
			sc.acc[q] = make([]float64, nslots)
		}
		clear(sc.prov[q])
	}
	if len(sc.seen) < nslots {
		sc.seen = make([]bool, nslots)
	}
	sc.touched = sc.touched[:0]
}

// Search ranks the indexed documents against query. An empty query, or one
// with no indexable term (only stopwords or punctuation), returns nil:
// listing is the caller's business. Results are deterministic: equal scores
// are ordered by ID.
func (ix *Index) Search(query string, o Options) []Hit {
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	an := ix.analyzer()
	base := an(nil, query)
	if len(base) == 0 {
		return nil
	}
	// Sub-queries: the whole request, then (for a long one) each clause.
	subs := []subQuery{{base: base, extra: ix.artifactTerms(query)}}
	if ix.cfg.Clauses && len(base) >= ix.cfg.ClauseMinTokens {
		if clauses := splitClauses(query); len(clauses) > 1 {
			for _, c := range clauses {
				if terms := an(nil, c); len(terms) > 0 {
					subs = append(subs, subQuery{base: terms, extra: ix.artifactTerms(c)})
				}
			}
		}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.nDocs == 0 {
		return nil
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)

	depth := max(limit, fuseDepth)
	lists := ix.rank(sc, subs, o, depth)
	ranking := lists[0]
	if len(lists) > 2 {
		weights := make([]float64, len(lists))
		weights[0] = 1
		for i := 1; i < len(weights); i++ {
			weights[i] = ix.cfg.ClauseWeight
		}
		ranking = ix.fuseRRF(lists, weights, depth)
	}
	if ix.cfg.Diversity > 0 {
		ranking = ix.diversify(ranking, ix.cfg.Diversity)
	}
	if len(ranking) > limit {
		ranking = ranking[:limit]
	}
	hits := make([]Hit, len(ranking))
	for i, r := range ranking {
		ref := ix.slots[r.slot]
		d := &ref.seg.docs[ref.i]
		hits[i] = Hit{ID: d.id, Kind: d.kind, Provider: ref.seg.provider, Score: r.score}
	}
	return hits
}

type subQuery struct {
	base  []string    // analysed terms
	extra []expansion // artifact terms
	terms []expansion // weighted terms after expansion
	qw    map[string]float64
}

func (ix *Index) idOf(slot uint32) string {
	ref := ix.slots[slot]
	return ref.seg.docs[ref.i].id
}

// less orders by score descending, then ID ascending.
func (ix *Index) less(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return ix.idOf(a.slot) < ix.idOf(b.slot)
}

// rank scores sub-queries in one pass over the postings of the union of
// their terms: BM25F over tool fields, fused with a BM25 ranking of
// providers. It returns, per sub-query, the best depth hits, best first.
func (ix *Index) rank(sc *scratch, subs []subQuery, o Options, depth int) [][]scored {
	cfg := &ix.cfg
	nq := len(subs)
	sc.reset(nq, len(ix.slots))
	// Union of the sub-queries' terms, with each sub-query's weight.
	union := map[string][]float64{}
	for q := range subs {
		sq := &subs[q]
		terms := ix.lex.expand(sq.base, cfg.AbbrevWeight, cfg.SynonymWeight, cfg.ExactWeight, cfg.QueryTFLog)
		terms = mergeTerms(terms, sq.extra)
		if cfg.DecompoundWeight > 0 {
			terms = mergeTerms(terms, ix.decompound(sq.base))
		}
		sq.terms = terms
		if cfg.NameCoverage > 0 {
			sq.qw = make(map[string]float64, len(terms))
			for _, t := range terms {
				sq.qw[t.term] = min(1, t.weight)
			}
		}
		for _, t := range terms {
			w := union[t.term]
			if w == nil {
				w = make([]float64, nq)
				union[t.term] = w
			}
			w[q] = t.weight
		}
	}
	order := make([]string, 0, len(union))
	for t := range union {
		order = append(order, t)
	}
	sort.Strings(order)

	N := float64(ix.nDocs)
	// BM25F length normalisation of field f: normC[f] + normK[f]*length.
	var normC, normK [NumFields]float64
	for f := range NumFields {
		avg := ix.lenSum[f] / N
		if avg <= 0 {
			avg = 1
		}
		normC[f] = 1 - cfg.FieldB[f]
		normK[f] = cfg.FieldB[f] / avg
	}
	k1 := cfg.K1
	P := float64(len(ix.segs))
	avgP := ix.provLen / P
	if avgP <= 0 {
		avgP = 1
	}
	useProv := cfg.ProviderWeight > 0 && o.Provider == ""
	for _, term := range order {
		ti := ix.terms[term]
		if ti == nil || ti.df == 0 {
			continue
		}
		qws := union[term]
		idf := bm25IDF(N, float64(ti.df))
		var fidf [NumFields]float64
		for f := range NumFields {
			if cfg.FieldIDF {
				fidf[f] = bm25IDF(N, float64(ti.fdf[f]))
			} else {
				fidf[f] = idf
			}
		}
		var pidf float64
		if useProv && ti.pdf > 0 {
			pidf = bm25IDF(P, float64(ti.pdf))
		}
		for _, sr := range ti.segs {
			seg := sr.seg
			if o.Provider != "" && seg.provider != o.Provider {
				continue
			}
			if pidf > 0 && sr.ptf > 0 {
				tfn := sr.ptf / (1 - 0.75 + 0.75*seg.plen/avgP)
				c := pidf * tfn * (k1 + 1) / (k1 + tfn)
				for q, w := range qws {
					if w > 0 {
						sc.prov[q][seg] += w * c
					}
				}
			}
			for _, p := range sr.post {
				if o.Kind != "" && seg.docs[p.doc].kind != o.Kind {
					continue
				}
				lens := &seg.lens[p.doc]
				// BM25F: field-weighted, length-normalised term frequency,
				// saturated once; each field's share carries its IDF.
				var tfw, evid float64
				for f := range NumFields {
					if p.tf[f] == 0 || cfg.FieldWeight[f] == 0 {
						continue
					}
					norm := normC[f] + normK[f]*float64(lens[f])
					x := cfg.FieldWeight[f] * float64(p.tf[f]) / norm
					tfw += x
					evid += x * fidf[f]
				}
				if tfw == 0 {
					continue
				}
				c := evid * (k1 + 1) / (k1 + tfw)
				slot := seg.slots[p.doc]
				if !sc.seen[slot] {
					sc.seen[slot] = true
					sc.touched = append(sc.touched, slot)
				}
				for q, w := range qws {
					if w > 0 {
						sc.acc[q][slot] += w * c
					}
				}
			}
		}
	}

	out := make([][]scored, nq)
	for q := range subs {
		out[q] = ix.collect(sc, q, subs[q].qw, useProv, depth)
	}
	for _, s := range sc.touched {
		sc.seen[s] = false
	}
	return out
}

// collect turns sub-query q's accumulators into its best depth hits, and
// zeroes them. Base score: the tool score normalised by the best one, plus
// the provider stage. The name-coverage feature (at most cfg.NameCoverage)
// is then computed for the best candidates only, which keeps long queries
// over large catalogs cheap.
func (ix *Index) collect(sc *scratch, q int, qw map[string]float64, useProv bool, depth int) []scored {
	cfg := &ix.cfg
	acc := sc.acc[q]
	var maxFlat, maxProv float64
	for _, s := range sc.touched {
		maxFlat = max(maxFlat, acc[s])
	}
	if useProv {
		for _, v := range sc.prov[q] {
			maxProv = max(maxProv, v)
		}
	}
	keep := depth
	if qw != nil {
		keep = depth + depth/2
	}
	h := &topHeap{ix: ix}
	for _, s := range sc.touched {
		v := acc[s]
		if v == 0 {
			continue
		}
		acc[s] = 0
		score := v / maxFlat
		if useProv && maxProv > 0 {
			score += cfg.ProviderWeight * sc.prov[q][ix.slots[s].seg] / maxProv
		}
		h.push(scored{s, score}, keep)
	}
	if qw == nil {
		return h.sorted()
	}
	cands := h.items
	h = &topHeap{ix: ix}
	idf := map[string]float64{}
	for _, c := range cands {
		ref := ix.slots[c.slot]
		c.score += cfg.NameCoverage * ix.nameCoverage(ref.seg.docs[ref.i].name, qw, idf)
		h.push(c, depth)
	}
	return h.sorted()
}

// fuseRRF merges rankings by weighted reciprocal rank fusion.
func (ix *Index) fuseRRF(lists [][]scored, weights []float64, depth int) []scored {
	k := ix.cfg.RRFK
	acc := map[uint32]float64{}
	order := []uint32{}
	for li, l := range lists {
		for r, s := range l {
			if _, ok := acc[s.slot]; !ok {
				order = append(order, s.slot)
			}
			acc[s.slot] += weights[li] / (k + float64(r+1))
		}
	}
	h := &topHeap{ix: ix}
	for _, s := range order {
		h.push(scored{s, acc[s]}, depth)
	}
	return h.sorted()
}

// diversify re-ranks greedily so that each further hit of an already listed
// provider is discounted by (1-d) per earlier hit of that provider.
func (ix *Index) diversify(in []scored, d float64) []scored {
	out := make([]scored, 0, len(in))
	rest := append([]scored(nil), in...)
	seen := map[*segment]int{}
	for len(rest) > 0 {
		best := -1
		var bestS scored
		for i, r := range rest {
			adj := scored{r.slot, r.score * math.Pow(1-d, float64(seen[ix.slots[r.slot].seg]))}
			if best < 0 || ix.less(adj, bestS) {
				best, bestS = i, adj
			}
		}
		out = append(out, bestS)
		seen[ix.slots[bestS.slot].seg]++
		rest = append(rest[:best], rest[best+1:]...)
	}
	return out
}

// topHeap keeps the best n scored items in a binary heap whose root is the
// worst kept item.
type topHeap struct {
	ix    *Index
	items []scored
}

// worse reports whether item i ranks below item j.
func (h *topHeap) worse(i, j int) bool { return h.ix.less(h.items[j], h.items[i]) }

func (h *topHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.worse(i, p) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *topHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h.worse(r, l) {
			c = r
		}
		if !h.worse(c, i) {
			return
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
}

func (h *topHeap) push(s scored, n int) {
	if len(h.items) < n {
		h.items = append(h.items, s)
		h.up(len(h.items) - 1)
		return
	}
	if h.ix.less(s, h.items[0]) {
		h.items[0] = s
		h.down(0)
	}
}

// sorted returns the kept items, best first.
func (h *topHeap) sorted() []scored {
	out := h.items
	sort.Slice(out, func(i, j int) bool { return h.ix.less(out[i], out[j]) })
	h.items = nil
	return out
}

// splitClauses cuts a request into clauses: at sentence ends, semicolons,
// commas, colons and the connectives "and", "then", "also". Fragments with
// fewer than two words are merged into the previous clause.
func splitClauses(q string) []string {
	var pieces []string
	var cur strings.Builder
	rs := []rune(q)
	cut := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			pieces = append(pieces, s)
		}
		cur.Reset()
	}
	for i, r := range rs {
		switch r {
		case '.', '!', '?', ';', ',', ':', '\n':
			// Only a boundary when followed by space or the end ("a.md" is not).
			if i+1 == len(rs) || unicode.IsSpace(rs[i+1]) {
				cut()
				continue
			}
		}
		cur.WriteRune(r)
	}
	cut()
	var out []string
	for _, p := range pieces {
		words := strings.Fields(p)
		start := 0
		for i, w := range words {
			switch strings.ToLower(w) {
			case "and", "then", "also", "afterwards", "finally":
				if i > start {
					out = append(out, strings.Join(words[start:i], " "))
				}
				start = i + 1
			}
		}
		if start < len(words) {
			out = append(out, strings.Join(words[start:], " "))
		}
	}
	// Merge fragments that carry fewer than two terms.
	var merged []string
	for _, c := range out {
		if len(Tokens(c)) < 2 && len(merged) > 0 {
			merged[len(merged)-1] += " " + c
			continue
		}
		merged = append(merged, c)
	}
	if len(merged) > 1 && len(Tokens(merged[0])) < 2 {
		merged[1] = merged[0] + " " + merged[1]
		merged = merged[1:]
	}
	return merged
}

func bm25IDF(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// nameCoverage is the IDF-weighted share of a tool name's terms found among
// the query terms (each counted at its query weight, at most 1).
func (ix *Index) nameCoverage(name []string, qw map[string]float64, idfCache map[string]float64) float64 {
	var have, all float64
	for _, t := range name {
		idf, ok := idfCache[t]
		if !ok {
			if ti := ix.terms[t]; ti != nil {
				idf = bm25IDF(float64(ix.nDocs), float64(ti.fdf[FieldName]))
			}
			idfCache[t] = idf
		}
		all += idf
		have += idf * qw[t]
	}
	if all == 0 {
		return 0
	}
	return have / all
}

// mergeTerms adds extra terms to terms, keeping the larger weight of a term
// present in both; the result stays sorted by term.
func mergeTerms(terms, extra []expansion) []expansion {
	if len(extra) == 0 {
		return terms
	}
	idx := make(map[string]int, len(terms))
	for i, t := range terms {
		idx[t.term] = i
	}
	for _, e := range extra {
		if i, ok := idx[e.term]; ok {
			terms[i].weight = max(terms[i].weight, e.weight)
			continue
		}
		idx[e.term] = len(terms)
		terms = append(terms, e)
	}
	sort.Slice(terms, func(i, j int) bool { return terms[i].term < terms[j].term })
	return terms
}

// decompound matches query words the index does not know through known
// parts: a split into two known words ("cosmosdb" -> cosmos + db), else the
// longest known prefix of at least 4 letters covering most of the word
// ("postgresql" -> postgres).
func (ix *Index) decompound(base []string) []expansion {
	var out []expansion
	w := ix.cfg.DecompoundWeight
	known := func(s string) (string, bool) {
		if _, stop := stopwords[s]; stop {
			return "", false
		}
		t := s
		if ix.cfg.Stem {
			t = stemWord(s)
		}
		ti := ix.terms[t]
		return t, ti != nil && ti.df > 0
	}
	prev := "" // surface of the previous word, for compounds
	for i, t := range base {
		if strings.HasPrefix(t, exactMark) {
			continue
		}
		surface := t
		if i+1 < len(base) && strings.HasPrefix(base[i+1], exactMark) {
			surface = base[i+1][len(exactMark):]
		}
		// Two adjacent words the index knows as one ("event hub" -> eventhub).
		if prev != "" && isASCIIAlpha(prev) && isASCIIAlpha(surface) {
			if c, ok := known(prev + surface); ok && len(prev+surface) >= 6 {
				out = append(out, expansion{c, w})
			}
		}
		prev = surface
		if len(surface) < 5 || len(surface) > 24 || !isASCIIAlpha(surface) {
			continue
		}
		if ti := ix.terms[t]; ti != nil && ti.df > 0 {
			continue
		}
		found := false
		for cut := len(surface) - 2; cut >= 3 && !found; cut-- {
			a, okA := known(surface[:cut])
			b, okB := known(surface[cut:])
			if okA && okB {
				out = append(out, expansion{a, w}, expansion{b, w})
				found = true
			}
		}
		for cut := len(surface) - 1; !found && cut >= 4 && cut*3 >= len(surface)*2; cut-- {
			if a, ok := known(surface[:cut]); ok {
				out = append(out, expansion{a, w})
				found = true
			}
		}
	}
	return out
}

// artifactTerms recognises file paths and URLs in a request: a path
// (/dir/name or name.ext) adds the term "file", a URL adds "url".
func (ix *Index) artifactTerms(q string) []expansion {
	w := ix.cfg.ArtifactWeight
	if w <= 0 {
		return nil
	}
	var file, url bool
	for _, f := range strings.Fields(q) {
		f = strings.Trim(f, "`'\"()[]<>,;")
		lf := strings.ToLower(f)
		switch {
		case strings.HasPrefix(lf, "http://") || strings.HasPrefix(lf, "https://") || strings.HasPrefix(lf, "www."):
			url = true
		case looksLikePath(f):
			file = true
		}
	}
	var out []expansion
	if file {
		out = append(out, expansion{"file", w})
	}
	if url {
		out = append(out, expansion{"url", w})
	}
	return out
}

// looksLikePath: an absolute or home-relative path with at least two
// components ("/root/a.md", "~/x"), or a name with a short alphanumeric
// extension ("report.pdf", "main.go") that is not a number ("2.5").
func looksLikePath(f string) bool {
	if (strings.HasPrefix(f, "/") || strings.HasPrefix(f, "~/") || strings.HasPrefix(f, "./")) && strings.Count(f, "/") >= 2 {
		return true
	}
	f = strings.TrimRight(f, ".")
	dot := strings.LastIndexByte(f, '.')
	if dot <= 0 || dot == len(f)-1 {
		return false
	}
	ext := f[dot+1:]
	if len(ext) > 5 {
		return false
	}
	letter := false
	for _, r := range ext {
		switch {
		case unicode.IsLetter(r) && r < 128:
			letter = true
		case unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letter && !strings.Contains(f[:dot], "..")
}
