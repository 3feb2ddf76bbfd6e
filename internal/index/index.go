// Package index is the one ranking implementation behind discover, search and
// the CLI: an in-memory, incrementally updated, fielded BM25F index over the
// tools and skills of every provider, with identifier-aware tokenization,
// stemming, a small tool-vocabulary lexicon, a provider-level stage fused
// with the tool ranking, and clause splitting for long multi-step requests.
//
// Postings are kept per provider ("segments"): Replace and Remove touch only
// that provider's postings and the global per-term counters, never other
// providers' postings.
//
// Queries (score.go) are scored term at a time into dense accumulators
// pooled across queries, all sub-queries (the request and its clauses) in
// one pass over the union of their terms. A term's per-document scores
// depend on global statistics, so they are cached per term and "epoch"
// (every Replace or Remove starts a new one) and recomputed lazily by the
// first query that needs the term: Replace stays incremental, and a warm
// query only adds precomputed scores. Collection keeps the best hits of each
// sub-query in a bounded heap behind a conservative score cut. Rankings are
// pinned by golden tests (golden_test.go).
package index

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agent-tools/agent-tools/internal/index/cjk"
)

// Param is one top-level parameter of a tool's input schema.
type Param struct {
	Name        string
	Description string
	Enum        []string
}

// Doc is one indexed item: a tool or a skill.
type Doc struct {
	ID                  string // unique: a tool's canonical name, or "skill:<provider>:<name>"
	Kind                string // "tool" | "skill"
	Provider            string // provider id (e.g. "github")
	ProviderDescription string
	Name                string // the tool's own name (e.g. "list_repos", "getRepo")
	Description         string
	Params              []Param
}

// Hit is one search result.
type Hit struct {
	ID, Kind, Provider string
	Score              float64
	// Why says briefly why the hit matched (with Options.Explain): the
	// request's words found in each field, or the semantic stage.
	Why string
}

// Options narrow a search.
type Options struct {
	Provider string // "" = all providers
	Kind     string // "" = all kinds
	Limit    int    // <= 0 means DefaultLimit
	Explain  bool   // fill Hit.Why
}

// DefaultLimit is the number of hits returned when Options.Limit <= 0.
const DefaultLimit = 10

// Fields of a document, each with its own weight and length normalisation.
const (
	FieldName = iota
	FieldDescription
	FieldParams   // parameter names and descriptions
	FieldEnum     // enum values of parameters
	FieldProvider // provider id and description
	FieldSummary  // the description's first sentence (indexed only when weighted)
	NumFields
)

// Config holds the ranking parameters and feature toggles. DefaultConfig is
// the best configuration measured on the retrieval benchmarks; the other
// values exist for ablations (bench/retrieval --ablate).
type Config struct {
	K1          float64            // BM25 term-frequency saturation
	FieldWeight [NumFields]float64 // BM25F field weights (0 drops the field)
	FieldB      [NumFields]float64 // BM25F length normalisation per field

	// FieldIDF weighs a term's evidence in each field by that field's own
	// inverse document frequency (a word in every tool's parameters but in
	// few tool names is strong evidence in a name); off = one global IDF.
	FieldIDF bool

	Stem          bool    // Snowball stemming of terms
	ExactWeight   float64 // with Stem: weight of an exact (unstemmed) form match, on top of the stem match (0 = off)
	SplitIdent    bool    // split identifiers (snake/camel/kebab/digits); off = whole words only
	AbbrevWeight  float64 // weight of lexicon abbreviation expansions (0 = off)
	SynonymWeight float64 // weight of lexicon synonym expansions (0 = off)

	// LexiconPhrases: a multi-word lexicon member found as a phrase in a
	// request ("pull request", "virtual machine") expands like a word.
	LexiconPhrases bool

	// SegmentNames splits run-together words in a tool's name into words
	// of its own description, parameters or provider
	// ("azureterraformbestpractices" -> azure terraform best practices).
	SegmentNames bool

	// QueryTFLog dampens repeated query words: weight 1+ln(count) instead
	// of count.
	QueryTFLog bool

	// Decompound: a query word unknown to the index is matched through
	// known parts ("cosmosdb" -> cosmos db) or its longest known prefix
	// ("postgresql" -> postgres), at this weight. 0 disables.
	DecompoundWeight float64

	// Artifacts: a file path in the request adds the term "file", a URL
	// adds "url", at this weight. 0 disables.
	ArtifactWeight float64

	// Implied capabilities (implied.go): relative dates imply time tools,
	// a path with a saving verb implies writing a file, web and shopping
	// words imply browser/fetch tools. Each weight 0 disables its cue.
	ImpliedTime, ImpliedWrite, ImpliedWeb float64

	// Pseudo-relevance feedback (prf.go): PRFTerms terms (0 = off) from
	// each sub-query's top PRFDocs hits are added at up to PRFWeight, and
	// the request is ranked again.
	PRFTerms  int
	PRFDocs   int
	PRFWeight float64

	// Term association mined from the catalog (prf.go): AssocTerms terms
	// (0 = off) per rare request word (df <= AssocMaxDF), at up to
	// AssocWeight.
	AssocTerms  int
	AssocMaxDF  int
	AssocWeight float64

	// PathTerms: the words of file paths and URLs in a request
	// ("/root/markdown/report.md") weigh this much each, without lexicon
	// expansion, instead of counting as request words. 0 disables.
	PathTerms float64

	// PhraseWeight: a word-pair (proximity) feature for the best
	// candidates: the IDF-weighted share of the request's adjacent word
	// pairs that are adjacent in the tool's name or description ("text to
	// speech" is not "speech to text"), times this weight. 0 disables.
	PhraseWeight float64

	// PairWeight: adjacent word pairs of tool names and of the first
	// PairSpan terms of descriptions (0 = all) are indexed as terms, and a
	// request's adjacent word pairs match them at this weight. Unlike
	// PhraseWeight this also finds candidates, at the cost of a larger
	// index. 0 disables (and indexes no pairs).
	PairWeight float64
	PairSpan   int

	// ActionWeight: a candidate whose name's action class (read, write,
	// delete) is none of the request's loses this much (action.go). 0
	// disables.
	ActionWeight float64

	// NameCoverage adds this weight times the IDF-weighted share of the
	// tool name's terms that the request contains. 0 disables.
	NameCoverage float64

	// Two-stage ranking: a BM25 ranking of providers (each provider is one
	// document made of its description and all its tools' text) fused
	// with the tool ranking. 0 disables.
	ProviderWeight float64
	ProviderFields [NumFields]float64 // how each tool field counts in the provider document

	// Clause splitting: a long request is also ranked clause by clause and
	// the rankings are fused by reciprocal rank fusion.
	Clauses         bool
	ClauseMinTokens int     // a query needs at least this many terms to be split
	ClauseWeight    float64 // RRF weight of each clause ranking (the whole query has 1)
	RRFK            float64 // RRF constant
	ClauseSteps     bool    // also cut at numbered steps and more connectives
	ClauseVerbs     bool    // merge a clause without an action verb into the previous one
	ClauseQuota     int     // the best ClauseQuota hits of each clause are kept in the first DefaultLimit (0 = off)

	// Diversity: the n-th hit from an already represented provider has its
	// score multiplied by (1-Diversity)^n. 0 disables.
	Diversity float64

	// CJKGloss: Chinese text (in any field, and in requests) is segmented
	// over CC-CEDICT and its English glosses are indexed beside the
	// original's character bigrams (package cjk). The dictionary loads on
	// the first text with a Han character.
	CJKGloss bool

	// Semantic stage (SetSemantic): how its ranking is fused with the
	// lexical one (FuseRRF or FuseBlend), its weight (RRF: the weight of
	// its reciprocal ranks, the lexical ranking having 1; blend: the share
	// of the similarity, 0..1), the RRF constant, and how many hits of
	// each ranking take part (0 = fuseDepth).
	SemanticFusion string
	SemanticWeight float64
	SemanticRRFK   float64
	SemanticDepth  int

	paths queryPaths // tests only: force internal scoring paths
}

// DefaultConfig returns the best measured configuration.
func DefaultConfig() Config {
	return Config{
		K1:          1.2,
		FieldWeight: [NumFields]float64{FieldName: 3, FieldDescription: 1, FieldParams: 0.4, FieldEnum: 0.3, FieldProvider: 0.6},
		FieldB:      [NumFields]float64{FieldName: 0.5, FieldDescription: 0.75, FieldParams: 0.75, FieldEnum: 0.75, FieldProvider: 0.75},

		FieldIDF:      true,
		QueryTFLog:    true,
		SegmentNames:  false,
		Stem:          true,
		ExactWeight:   0.5,
		SplitIdent:    true,
		AbbrevWeight:  0.9,
		SynonymWeight: 0.4,

		DecompoundWeight: 0.7,
		ArtifactWeight:   1,
		NameCoverage:     0.3,
		PairWeight:       0.4,
		PairSpan:         16,

		ProviderWeight: 0.5,
		ProviderFields: [NumFields]float64{FieldName: 1, FieldDescription: 1, FieldParams: 0.2, FieldEnum: 0, FieldProvider: 3},

		Clauses:         true,
		ClauseMinTokens: 8,
		ClauseWeight:    1,
		RRFK:            5,

		// A file path plus a saving verb implies a write tool: general tool
		// vocabulary; +.034 LiveMCPBench R@10, neutral on Azure (no paths).
		ImpliedWrite: 1,

		CJKGloss: true,

		SemanticFusion: FuseRRF,
		SemanticWeight: 1,
		SemanticRRFK:   60,

		Diversity: 0,
	}
}

type posting struct {
	doc uint32 // index into segment.slots
	tf  [NumFields]uint8
}

// segment holds one provider's documents and postings.
type segment struct {
	provider string
	sid      int32 // dense id of the segment while it is in the index (provider accumulators)
	docs     []docEntry
	slots    []uint32             // global slot of each doc, assigned on insert
	lens     [][NumFields]float32 // field lengths of each doc (hot in queries)
	post     map[string][]posting
	ptf      map[string]float64 // provider-document term weights
	fwd      [][]fwdTerm        // per document: its terms (only with pseudo-relevance feedback)
	plen     float64            // provider-document length
	lenSum   [NumFields]float64
}

type docEntry struct {
	id, kind string
	lens     [NumFields]float64
	name     []string    // distinct terms of the name, for the name-coverage feature
	nameTI   []*termInfo // the same terms' entries (resolved on insert)
	nameIDs  []int32     // and their ids (no pointer chase in the hot loop)
	actions  actionClass // action classes named by the tool's name
	seqTerms []string    // name and description terms in order ("" between), until insert
	seq      []int32     // the same as term ids (-1 between), for the phrase feature
}

// segRef is one provider's share of a term: its postings and its weight in
// the provider document (copied here so that a query needs no map lookups
// per provider).
type segRef struct {
	seg  *segment
	post []posting
	ptf  float64
}

type termInfo struct {
	term string           // the term itself
	id   int32            // dense id, reused after the term leaves the index
	df   int              // documents containing the term
	fdf  [NumFields]int32 // documents containing the term in each field
	pdf  int              // providers containing the term
	segs []segRef         // providers whose postings hold the term

	// imp caches the term's scores (impacts) under the global statistics
	// of one epoch; it is recomputed lazily by the first query that needs
	// the term after any Replace or Remove (see impacts).
	imp atomic.Pointer[impactList]
}

// Index is safe for concurrent use.
type Index struct {
	cfg Config
	lex *lexicon

	mu      sync.RWMutex
	segs    map[string]*segment
	terms   map[string]*termInfo
	slots   []slotRef // global slot -> doc (seg nil when free)
	slotSid []int32   // global slot -> sid of its segment (-1 when free)
	free    []uint32
	nDocs   int
	lenSum  [NumFields]float64
	provLen float64

	// epoch counts changes of the global statistics (every insert or
	// removal of a segment); cached impacts of an older epoch are stale.
	epoch   uint64
	sids    []*segment // segment by sid (nil when free)
	freeSid []int32
	nTID    int32   // term ids handed out
	freeTID []int32 // term ids free for reuse

	segBuilds int64 // segments built (for tests of incrementality)

	sem atomic.Pointer[semanticBox] // optional semantic stage
}

type slotRef struct {
	seg *segment
	i   int
}

// New returns an empty index with DefaultConfig.
func New() *Index { return NewWithConfig(DefaultConfig()) }

// NewWithConfig returns an empty index with the given configuration.
func NewWithConfig(cfg Config) *Index {
	if cfg.K1 <= 0 {
		cfg.K1 = 1.2
	}
	if cfg.RRFK <= 0 {
		cfg.RRFK = 60
	}
	return &Index{
		cfg:   cfg,
		lex:   lexFor(cfg.Stem),
		segs:  map[string]*segment{},
		terms: map[string]*termInfo{},
	}
}

var (
	lexOnce   [2]sync.Once
	lexTables [2]*lexicon
)

func lexFor(stem bool) *lexicon {
	i := 0
	if stem {
		i = 1
	}
	lexOnce[i].Do(func() { lexTables[i] = buildLexicon(stem) })
	return lexTables[i]
}

// Config returns the index's configuration.
func (ix *Index) Config() Config { return ix.cfg }

// Len returns the number of indexed documents.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.nDocs
}

// Providers returns the indexed provider ids, sorted.
func (ix *Index) Providers() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]string, 0, len(ix.segs))
	for p := range ix.segs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Replace sets the documents of one provider, replacing whatever it had.
// Only that provider's postings are rebuilt; an empty docs removes it.
// Documents with a duplicate ID keep the last one.
func (ix *Index) Replace(provider string, docs []Doc) {
	var seg *segment
	if len(docs) > 0 {
		seg = ix.buildSegment(provider, docs) // outside the lock: the costly part
	}
	ix.mu.Lock()
	ix.removeLocked(provider)
	if seg != nil {
		ix.insertLocked(seg)
		ix.segBuilds++
	}
	ix.mu.Unlock()
	if s := ix.Semantic(); s != nil {
		s.Update(provider, docs)
	}
}

// Remove drops one provider's documents.
func (ix *Index) Remove(provider string) {
	ix.mu.Lock()
	ix.removeLocked(provider)
	ix.mu.Unlock()
	if s := ix.Semantic(); s != nil {
		s.Update(provider, nil)
	}
}

func (ix *Index) buildSegment(provider string, docs []Doc) *segment {
	// Deduplicate by ID, last wins, keeping first-seen order.
	pos := make(map[string]int, len(docs))
	uniq := make([]Doc, 0, len(docs))
	for _, d := range docs {
		if i, ok := pos[d.ID]; ok {
			uniq[i] = d
			continue
		}
		pos[d.ID] = len(uniq)
		uniq = append(uniq, d)
	}
	seg := &segment{
		provider: provider,
		docs:     make([]docEntry, len(uniq)),
		lens:     make([][NumFields]float32, len(uniq)),
		post:     map[string][]posting{},
		ptf:      map[string]float64{},
	}
	provDesc := ""
	for _, d := range uniq {
		if d.ProviderDescription != "" {
			provDesc = d.ProviderDescription
			break
		}
	}
	an := ix.analyzer()
	provTerms := an(nil, provider, provDesc)
	pf := ix.cfg.ProviderFields
	if pf[FieldProvider] > 0 {
		for _, t := range provTerms {
			seg.ptf[t] += pf[FieldProvider]
			if !strings.HasPrefix(t, exactMark) {
				seg.plen += pf[FieldProvider]
			}
		}
	}
	var buf []string
	tf := map[string]*[NumFields]uint8{}
	for i, d := range uniq {
		kind := d.Kind
		if kind == "" {
			kind = "tool"
		}
		de := &seg.docs[i]
		de.id, de.kind = d.ID, kind
		clear(tf)
		addField := func(f int, terms []string) {
			n := 0
			for _, t := range terms {
				if !isAuxTerm(t) {
					n++
				}
				c := tf[t]
				if c == nil {
					c = new([NumFields]uint8)
					tf[t] = c
				}
				if c[f] < math.MaxUint8 {
					c[f]++
				}
			}
			de.lens[f] += float64(n)
		}
		buf = an(buf[:0], d.Name)
		if ix.cfg.SegmentNames {
			buf = ix.segmentName(buf, d, provider, provDesc)
		}
		if ix.cfg.PairWeight > 0 {
			buf = appendPairs(buf, len(buf))
		}
		addField(FieldName, buf)
		for _, t := range buf {
			if !isAuxTerm(t) && !slices.Contains(de.name, t) {
				de.name = append(de.name, t)
			}
		}
		if ix.cfg.ActionWeight > 0 {
			de.actions = textActions(d.Name)
		}
		if ix.cfg.PhraseWeight > 0 {
			de.seqTerms = appendPlain(de.seqTerms, buf)
			de.seqTerms = append(de.seqTerms, "")
		}
		buf = an(buf[:0], d.Description)
		if ix.cfg.PhraseWeight > 0 {
			de.seqTerms = appendPlain(de.seqTerms, buf)
		}
		if ix.cfg.PairWeight > 0 {
			span := len(buf)
			if ix.cfg.PairSpan > 0 {
				span = min(span, ix.cfg.PairSpan)
			}
			buf = appendPairs(buf, span)
		}
		addField(FieldDescription, buf)
		if ix.cfg.FieldWeight[FieldSummary] > 0 {
			buf = an(buf[:0], firstSentence(d.Description))
			if len(buf) > summaryTerms {
				buf = buf[:summaryTerms]
			}
			addField(FieldSummary, buf)
		}
		buf = buf[:0]
		for _, p := range d.Params {
			buf = an(buf, p.Name, p.Description)
		}
		addField(FieldParams, buf)
		buf = buf[:0]
		for _, p := range d.Params {
			for _, e := range p.Enum {
				buf = an(buf, e)
			}
		}
		addField(FieldEnum, buf)
		addField(FieldProvider, provTerms)
		for f := range NumFields {
			seg.lenSum[f] += de.lens[f]
			seg.lens[i][f] = float32(de.lens[f])
		}
		for t, c := range tf {
			seg.post[t] = append(seg.post[t], posting{doc: uint32(i), tf: *c})
			for f := range FieldProvider {
				if c[f] > 0 && pf[f] > 0 && !isPair(t) { // word pairs stay out of the provider document
					seg.ptf[t] += pf[f] * float64(c[f])
				}
			}
		}
		for f := range FieldProvider {
			seg.plen += pf[f] * de.lens[f]
		}
	}
	return seg
}

// analyzer returns a function appending the terms of the given texts.
func (ix *Index) analyzer() func(dst []string, texts ...string) []string {
	stem, split, exact := ix.cfg.Stem, ix.cfg.SplitIdent, ix.cfg.Stem && ix.cfg.ExactWeight > 0
	gloss := ix.cfg.CJKGloss
	return func(dst []string, texts ...string) []string {
		for _, s := range texts {
			if gloss && cjk.HasHan(s) {
				s += " " + cjk.Gloss(s)
			}
			if split {
				dst = analyzeExt(s, stem, exact, dst)
			} else {
				dst = analyzeWhole(s, stem, dst)
			}
		}
		return dst
	}
}

func (ix *Index) removeLocked(provider string) {
	seg := ix.segs[provider]
	if seg == nil {
		return
	}
	delete(ix.segs, provider)
	ix.epoch++
	ix.sids[seg.sid] = nil
	ix.freeSid = append(ix.freeSid, seg.sid)
	for t, ps := range seg.post {
		ti := ix.terms[t]
		ti.df -= len(ps)
		for _, p := range ps {
			for f := range NumFields {
				if p.tf[f] > 0 {
					ti.fdf[f]--
				}
			}
		}
		for i, s := range ti.segs {
			if s.seg == seg {
				last := len(ti.segs) - 1
				ti.segs[i] = ti.segs[last]
				ti.segs[last] = segRef{}
				ti.segs = ti.segs[:last]
				break
			}
		}
	}
	for t := range seg.ptf {
		ix.terms[t].pdf--
	}
	for t := range seg.post {
		if ti := ix.terms[t]; ti != nil && ti.df <= 0 && ti.pdf <= 0 {
			delete(ix.terms, t)
			ix.freeTID = append(ix.freeTID, ti.id)
		}
	}
	for t := range seg.ptf {
		if ti := ix.terms[t]; ti != nil && ti.df <= 0 && ti.pdf <= 0 {
			delete(ix.terms, t)
			ix.freeTID = append(ix.freeTID, ti.id)
		}
	}
	for _, s := range seg.slots {
		ix.slots[s] = slotRef{}
		ix.slotSid[s] = -1
		ix.free = append(ix.free, s)
	}
	ix.nDocs -= len(seg.docs)
	for f := range NumFields {
		ix.lenSum[f] -= seg.lenSum[f]
	}
	ix.provLen -= seg.plen
}

func (ix *Index) insertLocked(seg *segment) {
	ix.segs[seg.provider] = seg
	ix.epoch++
	if n := len(ix.freeSid); n > 0 {
		seg.sid = ix.freeSid[n-1]
		ix.freeSid = ix.freeSid[:n-1]
		ix.sids[seg.sid] = seg
	} else {
		seg.sid = int32(len(ix.sids))
		ix.sids = append(ix.sids, seg)
	}
	seg.slots = make([]uint32, len(seg.docs))
	for i := range seg.docs {
		var s uint32
		if n := len(ix.free); n > 0 {
			s = ix.free[n-1]
			ix.free = ix.free[:n-1]
		} else {
			s = uint32(len(ix.slots))
			ix.slots = append(ix.slots, slotRef{})
			ix.slotSid = append(ix.slotSid, -1)
		}
		ix.slots[s] = slotRef{seg: seg, i: i}
		ix.slotSid[s] = seg.sid
		seg.slots[i] = s
	}
	term := func(t string) *termInfo {
		ti := ix.terms[t]
		if ti == nil {
			ti = &termInfo{term: t}
			if n := len(ix.freeTID); n > 0 {
				ti.id = ix.freeTID[n-1]
				ix.freeTID = ix.freeTID[:n-1]
			} else {
				ti.id = ix.nTID
				ix.nTID++
			}
			ix.terms[t] = ti
		}
		return ti
	}
	for t, ps := range seg.post {
		ti := term(t)
		ti.df += len(ps)
		for _, p := range ps {
			for f := range NumFields {
				if p.tf[f] > 0 {
					ti.fdf[f]++
				}
			}
		}
		ti.segs = append(ti.segs, segRef{seg: seg, post: ps, ptf: seg.ptf[t]})
	}
	for t := range seg.ptf {
		term(t).pdf++
	}
	for i := range seg.docs {
		de := &seg.docs[i]
		de.nameTI = make([]*termInfo, len(de.name))
		de.nameIDs = make([]int32, len(de.name))
		for j, t := range de.name {
			de.nameTI[j] = ix.terms[t]
			de.nameIDs[j] = de.nameTI[j].id
		}
		if de.seqTerms != nil {
			de.seq = make([]int32, len(de.seqTerms))
			for j, t := range de.seqTerms {
				de.seq[j] = -1
				if ti := ix.terms[t]; t != "" && ti != nil {
					de.seq[j] = ti.id
				}
			}
			de.seqTerms = nil
		}
	}
	if ix.cfg.PRFTerms > 0 || ix.cfg.AssocTerms > 0 {
		ix.buildForward(seg)
	}
	ix.nDocs += len(seg.docs)
	for f := range NumFields {
		ix.lenSum[f] += seg.lenSum[f]
	}
	ix.provLen += seg.plen
}

// segmentName adds to a name's terms the parts of its long run-together
// words, when such a word splits entirely into words that the tool's own
// description, parameters or provider use.
func (ix *Index) segmentName(terms []string, d Doc, provider, provDesc string) []string {
	var long []string
	rawWords(d.Name, func(w string, cjk bool) {
		if !cjk && len(w) >= 8 && isASCIIAlpha(w) {
			long = append(long, w)
		}
	})
	if len(long) == 0 {
		return terms
	}
	vocab := map[string]bool{}
	add := func(s string) {
		rawWords(s, func(w string, cjk bool) {
			if !cjk && len(w) >= 2 && isASCIIAlpha(w) {
				vocab[w] = true
			}
		})
	}
	add(d.Description)
	add(provider)
	add(provDesc)
	for _, p := range d.Params {
		add(p.Name)
		add(p.Description)
	}
	an := ix.analyzer()
	for _, w := range long {
		if parts := segmentWord(w, vocab); len(parts) > 1 {
			terms = an(terms, strings.Join(parts, " "))
		}
	}
	return terms
}

// summaryTerms caps the summary field.
const summaryTerms = 24

// firstSentence returns text up to its first sentence end.
func firstSentence(text string) string {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '!', '?', '\n':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i] == '\n' {
				if s := strings.TrimSpace(text[:i]); s != "" {
					return s
				}
			}
		}
	}
	if i := strings.Index(text, "。"); i > 0 {
		return text[:i]
	}
	return text
}

// segmentWord splits w into the fewest words of vocab (each at least two
// letters), or returns nil.
func segmentWord(w string, vocab map[string]bool) []string {
	n := len(w)
	const inf = 1 << 30
	best := make([]int, n+1) // fewest parts covering w[:i]
	from := make([]int, n+1)
	for i := 1; i <= n; i++ {
		best[i] = inf
		for j := max(0, i-30); j <= i-2; j++ {
			if best[j] < inf && vocab[w[j:i]] && best[j]+1 < best[i] {
				best[i], from[i] = best[j]+1, j
			}
		}
	}
	if best[n] >= inf {
		return nil
	}
	var parts []string
	for i := n; i > 0; i = from[i] {
		parts = append(parts, w[from[i]:i])
	}
	slices.Reverse(parts)
	return parts
}
