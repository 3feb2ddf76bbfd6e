package index

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// maxClauses caps the clauses a request is ranked by.
const maxClauses = 32

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
	depth := max(limit, fuseDepth)
	sem, w := ix.semanticFor()
	if sem != nil && ix.cfg.SemanticDepth > 0 {
		depth = max(limit, ix.cfg.SemanticDepth)
	}
	// The semantic stage (a network round trip under its own deadline)
	// runs beside the lexical ranking, outside the index lock.
	var semHits chan []Hit
	if sem != nil {
		semHits = make(chan []Hit, 1)
		go func() {
			hs, err := sem.Similar(query, o, depth)
			if err != nil {
				hs = nil // lexical ranking only
			}
			semHits <- hs
		}()
	}
	hits := ix.searchLexical(query, o, depth)
	if semHits != nil {
		if hits == nil && len(ix.analyzer()(nil, query)) == 0 {
			<-semHits
			return nil // nothing to search for: listing is the caller's business
		}
		hits = ix.fuseSemantic(hits, <-semHits, w)
	}
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// searchLexical is the lexical ranking: the best depth hits.
func (ix *Index) searchLexical(query string, o Options, depth int) []Hit {
	an := ix.analyzer()
	all := an(nil, query)
	if len(all) == 0 {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.nDocs == 0 {
		return nil
	}
	subs := ix.subQueries(query, all)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)

	lists := ix.rank(sc, subs, o, depth)
	if ix.cfg.PRFTerms > 0 && ix.cfg.PRFDocs > 0 && ix.cfg.PRFWeight > 0 {
		for q := range subs {
			subs[q].extra = mergeTerms(subs[q].extra, ix.feedbackTerms(&subs[q], lists[q]))
		}
		lists = ix.rank(sc, subs, o, depth)
	}
	ranking := lists[0]
	if len(lists) > 2 {
		weights := make([]float64, len(lists))
		weights[0] = 1
		for i := 1; i < len(weights); i++ {
			weights[i] = ix.cfg.ClauseWeight
		}
		ranking = ix.fuseRRF(sc, lists, weights, depth)
		if ix.cfg.ClauseQuota > 0 {
			ranking = clauseQuota(ranking, lists[1:], ix.cfg.ClauseQuota, DefaultLimit)
		}
	}
	if ix.cfg.Diversity > 0 {
		ranking = ix.diversify(ranking, ix.cfg.Diversity)
	}
	if len(ranking) > depth {
		ranking = ranking[:depth]
	}
	var words []queryWord
	if o.Explain {
		words = ix.queryWords(query)
	}
	hits := make([]Hit, len(ranking))
	for i, r := range ranking {
		ref := ix.slots[r.slot]
		d := &ref.seg.docs[ref.i]
		hits[i] = Hit{ID: d.id, Kind: d.kind, Provider: ref.seg.provider, Score: r.score}
		if o.Explain {
			hits[i].Why = ix.explain(ref.seg, ref.i, words)
		}
	}
	return hits
}

// subQueries returns the sub-queries of a request whose terms are all: the
// whole request, then (for a long one) each clause, at most maxClauses.
// Called under the read lock.
func (ix *Index) subQueries(query string, all []string) []subQuery {
	an := ix.analyzer()
	subs := []subQuery{ix.subQuery(query, all)}
	if ix.cfg.Clauses && len(all) >= ix.cfg.ClauseMinTokens {
		if clauses := splitClausesOpt(query, ix.cfg.ClauseSteps, ix.cfg.ClauseVerbs); len(clauses) > 1 {
			if len(clauses) > maxClauses {
				// Bounded work and memory (accumulators are per clause):
				// the tail of an endless request is one last clause.
				clauses[maxClauses-1] = strings.Join(clauses[maxClauses-1:], " ")
				clauses = clauses[:maxClauses]
			}
			for _, c := range clauses {
				if terms := an(nil, c); len(terms) > 0 {
					subs = append(subs, ix.subQuery(c, terms))
				}
			}
		}
	}
	return subs
}

// subQuery analyses one (sub-)query whose terms are terms. With
// Config.PathTerms, the words of file paths and URLs are arguments rather
// than a description of the capability: they are taken out of the base terms
// and weigh PathTerms each, without lexicon expansion.
func (ix *Index) subQuery(text string, terms []string) subQuery {
	base := terms
	var pathTerms []expansion
	if w := ix.cfg.PathTerms; w > 0 {
		if words, paths := splitPaths(text); paths != "" {
			an := ix.analyzer()
			if b := an(nil, words); len(b) > 0 {
				base = b
				for _, t := range an(nil, paths) {
					if !strings.HasPrefix(t, exactMark) {
						pathTerms = append(pathTerms, expansion{t, w})
					}
				}
			}
		}
	}
	extra := ix.extraTerms(text, base)
	if len(pathTerms) > 0 {
		// A word both in the text and in a path keeps its text weight.
		inBase := map[string]bool{}
		for _, t := range base {
			inBase[t] = true
		}
		var keep []expansion
		for _, e := range pathTerms {
			if !inBase[e.term] {
				keep = append(keep, e)
			}
		}
		extra = mergeTerms(extra, dedupeMax(keep))
	}
	sq := subQuery{base: base, extra: extra}
	if ix.cfg.ActionWeight > 0 {
		sq.actions = textActions(text)
	}
	return sq
}

// dedupeMax merges repeated terms, keeping the largest weight.
func dedupeMax(es []expansion) []expansion {
	if len(es) == 0 {
		return nil
	}
	return mergeTerms([]expansion{}, es)
}

// splitPaths separates a text's file paths and URLs from its other words.
func splitPaths(text string) (words, paths string) {
	var w, p []string
	for _, f := range strings.Fields(text) {
		raw := strings.Trim(f, "`'\"()[]<>,;:!?")
		lf := strings.ToLower(raw)
		if strings.HasPrefix(lf, "http://") || strings.HasPrefix(lf, "https://") || strings.HasPrefix(lf, "www.") ||
			looksLikePath(strings.TrimRight(raw, ".")) || (strings.HasPrefix(raw, "/") && strings.Count(raw, "/") >= 2) {
			p = append(p, raw)
			continue
		}
		w = append(w, f)
	}
	if len(p) == 0 {
		return text, ""
	}
	return strings.Join(w, " "), strings.Join(p, " ")
}

// extraTerms are a (sub-)query's terms beyond its words and their lexicon
// neighbours: artifacts, implied capabilities and word pairs.
func (ix *Index) extraTerms(text string, base []string) []expansion {
	extra := mergeTerms(ix.artifactTerms(text), ix.impliedTerms(text))
	if w := ix.cfg.PairWeight; w > 0 {
		var pairs []expansion
		for _, t := range appendPairs(slices.Clone(base), len(base))[len(base):] {
			if ti := ix.terms[t]; ti != nil && ti.df > 0 { // (under the read lock)
				pairs = append(pairs, expansion{t, w})
			}
		}
		extra = mergeTerms(extra, dedupeMax(pairs))
	}
	return extra
}

type subQuery struct {
	actions actionClass // action classes the text asks for (ActionWeight)
	base    []string    // analysed terms
	extra   []expansion // artifact terms
	terms   []expansion // weighted terms after expansion
}

func (ix *Index) termOf(ti *termInfo) string { return ti.term }

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

// clauseQuota makes sure that the best quota hits of every clause are in
// the first n of the fused ranking: missing ones replace the last hits of
// the first n that no clause needs, keeping the fused order otherwise.
func clauseQuota(fused []scored, clauses [][]scored, quota, n int) []scored {
	if len(fused) <= n {
		return fused
	}
	need := map[uint32]bool{}
	for _, l := range clauses {
		for _, s := range l[:min(quota, len(l))] {
			need[s.slot] = true
		}
	}
	pos := map[uint32]int{}
	for i, s := range fused {
		pos[s.slot] = i
	}
	var missing []int // positions beyond n, in fused order
	for slot := range need {
		if p, ok := pos[slot]; ok && p >= n {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return fused
	}
	slices.Sort(missing)
	head := slices.Clone(fused[:n])
	// Free the last slots of the head held by hits no clause needs.
	free := 0
	for i := n - 1; i >= 0 && free < len(missing); i-- {
		if !need[head[i].slot] {
			head = append(head[:i], head[i+1:]...)
			free++
		}
	}
	promoted := map[int]bool{}
	for _, p := range missing[:free] {
		head = append(head, fused[p])
		promoted[p] = true
	}
	out := head
	for i, s := range fused {
		if i < n {
			if !slices.ContainsFunc(head, func(h scored) bool { return h.slot == s.slot }) {
				out = append(out, s)
			}
			continue
		}
		if !promoted[i] {
			out = append(out, s)
		}
	}
	return out
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
func splitClauses(q string) []string { return splitClausesOpt(q, false, false) }

// splitClausesOpt is splitClauses with two refinements (Config.ClauseSteps,
// Config.ClauseVerbs): steps also cuts at numbered steps ("1.", "2)",
// "step 3") and more connectives ("lastly", "subsequently", "after that");
// verbs merges a clause without an action verb (a list item such as "green
// spaces") into the previous clause.
func splitClausesOpt(q string, steps, verbs bool) []string {
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
		case '.', '!', '?', ';', ',', ':', '\n', ')':
			if r == ')' && !steps {
				break
			}
			// Only a boundary when followed by space or the end ("a.md" is not).
			if i+1 == len(rs) || unicode.IsSpace(rs[i+1]) {
				if steps && (r == '.' || r == ')') {
					// "1." or "2)" ends a step number, not a sentence: the
					// number goes, the text before it is a clause.
					if s := cur.String(); endsWithStepNumber(s) {
						cur.Reset()
						cur.WriteString(strings.TrimRight(strings.TrimRight(s, "0123456789"), "("))
						cut()
						continue
					}
				}
				if r == ')' {
					break
				}
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
		for i := 0; i < len(words); i++ {
			w := strings.ToLower(words[i])
			skip := 0 // connective words to drop
			switch w {
			case "and", "then", "also", "afterwards", "finally":
				skip = 1
			}
			if steps && skip == 0 {
				switch {
				case w == "lastly" || w == "subsequently" || w == "afterward" || w == "additionally":
					skip = 1
				case (w == "after" || w == "following") && i+1 < len(words) &&
					(strings.EqualFold(words[i+1], "that") || strings.EqualFold(words[i+1], "this")):
					skip = 2
				case isStepNumber(w):
					skip = 1
				case w == "step" && i+1 < len(words) && isStepNumber(strings.ToLower(words[i+1])+"."):
					skip = 2
				}
			}
			if skip == 0 {
				continue
			}
			if i > start {
				out = append(out, strings.Join(words[start:i], " "))
			}
			start = i + skip
			i += skip - 1
		}
		if start < len(words) {
			out = append(out, strings.Join(words[start:], " "))
		}
	}
	// Merge fragments that carry fewer than two terms (and, with verbs,
	// fragments without an action verb).
	weak := func(c string) bool {
		return len(Tokens(c)) < 2 || (verbs && !hasActionVerb(c))
	}
	var merged []string
	for _, c := range out {
		if len(merged) > 0 && weak(c) {
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

// endsWithStepNumber: s ends with a word of one or two digits ("... 2").
func endsWithStepNumber(s string) bool {
	j := len(s)
	for j > 0 && s[j-1] >= '0' && s[j-1] <= '9' {
		j--
	}
	if n := len(s) - j; n == 0 || n > 2 {
		return false
	}
	if j > 0 && s[j-1] == '(' {
		j--
	}
	return j == 0 || s[j-1] == ' ' || s[j-1] == '\n' || s[j-1] == '\t'
}

// isStepNumber recognises a step number: "1.", "2)", "(3)".
func isStepNumber(w string) bool {
	w = strings.TrimPrefix(w, "(")
	if len(w) < 2 || (w[len(w)-1] != '.' && w[len(w)-1] != ')') {
		return false
	}
	for _, c := range w[:len(w)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(w) <= 3
}

// actionVerbs are the (stemmed) verbs that make a clause a step of a task:
// the lexicon's verbs and the common verbs of requests.
var actionVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, g := range synonymGroups[:31] { // the verb groups
		for _, w := range g {
			m[stemWord(w)] = true
		}
	}
	for _, w := range strings.Fields(`find tell give show recommend suggest plan check analyze analyse
		generate create save write read convert merge extract organize organise summarize summarise compare
		list search get fetch send draft book calculate translate download upload make build open play
		explain introduce describe identify look collect gather prepare retrieve track estimate assess
		research review provide produce design map draw render record report schedule remind notify
		buy order pay post reply answer determine predict recommend rank sort filter count`) {
		m[stemWord(w)] = true
	}
	return m
}()

func hasActionVerb(c string) bool {
	for _, f := range strings.Fields(c) {
		w := strings.ToLower(strings.Trim(f, "`'\"()[]<>,;:.!?"))
		if isASCIIAlpha(w) && actionVerbs[stemWord(w)] {
			return true
		}
	}
	return false
}

func bm25IDF(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// mergeTerms adds extra terms to terms, keeping the larger weight of a term
// present in both (or repeated); the result is sorted by term.
func mergeTerms(terms, extra []expansion) []expansion {
	if len(extra) == 0 {
		return terms
	}
	all := append(terms[:len(terms):len(terms)], extra...)
	slices.SortFunc(all, func(a, b expansion) int { return strings.Compare(a.term, b.term) })
	out := all[:0]
	for _, e := range all {
		if n := len(out); n > 0 && out[n-1].term == e.term {
			out[n-1].weight = max(out[n-1].weight, e.weight)
			continue
		}
		out = append(out, e)
	}
	return out
}

// knownTerm memoises decompoundMemo's look-ups within one query.
type knownTerm struct {
	term string
	ok   bool
}

// decompoundMemo matches query words the index does not know through known
// parts: a split into two known words ("cosmosdb" -> cosmos + db), else the
// longest known prefix of at least 4 letters covering most of the word
// ("postgresql" -> postgres). The look-ups of word parts are memoised in sc
// (the clauses of a request repeat the whole request's words); sc may be nil.
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
