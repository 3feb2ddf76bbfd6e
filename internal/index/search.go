package index

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// fuseDepth is how many hits of each partial ranking take part in fusion.
const fuseDepth = 50

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
		ranking = ix.fuseRRF(sc, lists, weights, depth)
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

// fuseRRF merges rankings by weighted reciprocal rank fusion.
func (ix *Index) fuseRRF(sc *scratch, lists [][]scored, weights []float64, depth int) []scored {
	k := ix.cfg.RRFK
	if len(sc.fpos) < len(ix.slots) {
		sc.fpos = make([]int32, len(ix.slots))
	}
	var fused []scored
	for li, l := range lists {
		for r, s := range l {
			i := sc.fpos[s.slot] - 1
			if i < 0 {
				i = int32(len(fused))
				sc.fpos[s.slot] = i + 1
				fused = append(fused, scored{slot: s.slot})
			}
			fused[i].score += weights[li] / (k + float64(r+1))
		}
	}
	for _, f := range fused {
		sc.fpos[f.slot] = 0
	}
	slices.SortFunc(fused, ix.cmp)
	if len(fused) > depth {
		fused = fused[:depth]
	}
	return fused
}

// cmp orders by score descending, then ID ascending.
func (ix *Index) cmp(a, b scored) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	}
	return strings.Compare(ix.idOf(a.slot), ix.idOf(b.slot))
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
func (h *topHeap) worse(i, j int) bool {
	a, b := h.items[i].score, h.items[j].score
	if a != b {
		return a < b
	}
	return h.ix.idOf(h.items[i].slot) > h.ix.idOf(h.items[j].slot)
}

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
	items := h.items
	n := len(items)
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
		items[i], items[c] = items[c], items[i]
		i = c
	}
}

func (h *topHeap) push(s scored, n int) {
	if len(h.items) < n {
		h.items = append(h.items, s)
		h.up(len(h.items) - 1)
		return
	}
	if n == 0 {
		return
	}
	root := h.items[0]
	if s.score > root.score || (s.score == root.score && h.ix.idOf(s.slot) < h.ix.idOf(root.slot)) {
		h.items[0] = s
		h.down(0)
	}
}

// sorted returns the kept items, best first.
func (h *topHeap) sorted() []scored {
	out := h.items
	slices.SortFunc(out, h.ix.cmp)
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
	return ix.decompoundMemo(base, nil)
}

// knownTerm memoises decompound's look-ups within one query.
type knownTerm struct {
	term string
	ok   bool
}

// decompoundMemo is decompound with the look-ups of its word parts
// memoised in sc (the clauses of a request repeat the whole request's
// words); sc may be nil.
func (ix *Index) decompoundMemo(base []string, sc *scratch) []expansion {
	var out []expansion
	w := ix.cfg.DecompoundWeight
	lookup := func(s string) (string, bool) {
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
	known := lookup
	if sc != nil {
		known = func(s string) (string, bool) {
			if k, ok := sc.known[s]; ok {
				return k.term, k.ok
			}
			t, ok := lookup(s)
			sc.known[s] = knownTerm{t, ok}
			return t, ok
		}
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
