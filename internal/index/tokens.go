package index

import (
	"hash/maphash"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Tokens turns text into index terms with the default analysis, the same one
// the index applies to documents and to queries:
//
//   - identifiers are split: snake_case, camelCase, PascalCase (HTTPServer ->
//     http server), kebab-case, dotted.names and letter/digit boundaries
//     (getV2 -> get v2 -> v 2, plus the short mixed form "v2"); a mixed-case
//     word also keeps its joined form (MySQL -> my sql mysql);
//   - everything is lower-cased (Unicode-aware);
//   - English stopwords and single Latin letters are dropped;
//   - words are stemmed with the Snowball (Porter2) English stemmer;
//   - letter/digit runs longer than 64 characters (base64, hashes) are
//     dropped;
//   - runs of CJK characters become overlapping character bigrams (a lone
//     character stays a unigram), since those scripts have no spaces.
//
// Tokens never returns empty strings.
func Tokens(s string) []string {
	return analyze(s, true, nil)
}

// maxWordRunes is the longest letter/digit run treated as a word.
const maxWordRunes = 64

// rawWords splits s into lower-cased sub-words (identifier parts) without
// stopword removal or stemming. emit is called for each sub-word; cjk
// reports whether the word is a CJK n-gram (never stemmed or stopped).
func rawWords(s string, emit func(w string, cjk bool)) {
	var word []rune
	wstart, ascii := -1, true // byte offset of the current word; all ASCII so far
	flush := func(end int) {
		// Runs longer than maxWordRunes are data (base64, hashes), not
		// words: dropped.
		if len(word) > 0 && len(word) <= maxWordRunes {
			if ascii {
				splitIdentASCII(s[wstart:end], emit) // substrings: no allocation
			} else {
				splitIdent(word, emit)
			}
		}
		word = word[:0]
		wstart, ascii = -1, true
	}
	var cjkRun []rune
	flushCJK := func() {
		if len(cjkRun) == 0 {
			return
		}
		if len(cjkRun) == 1 {
			emit(string(cjkRun), true)
		} else {
			for i := 0; i+1 < len(cjkRun); i++ {
				emit(string(cjkRun[i:i+2]), true)
			}
		}
		cjkRun = cjkRun[:0]
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		pos := i
		i += size
		if r == utf8.RuneError && size <= 1 {
			flush(pos)
			flushCJK()
			continue
		}
		if r < utf8.RuneSelf { // ASCII fast path
			if c := byte(r); 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				flushCJK()
				if wstart < 0 {
					wstart = pos
				}
				word = append(word, r)
			} else {
				flush(pos)
				flushCJK()
			}
			continue
		}
		switch {
		case isCJK(r):
			flush(pos)
			cjkRun = append(cjkRun, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			flushCJK()
			if wstart < 0 {
				wstart = pos
			}
			ascii = false
			word = append(word, r)
		default:
			flush(pos)
			flushCJK()
		}
	}
	flush(len(s))
	flushCJK()
}

// splitIdentASCII is splitIdent for an all-ASCII alphanumeric run.
func splitIdentASCII(w string, emit func(string, bool)) {
	start := 0
	mixed := false
	parts := 0
	cut := func(end int) {
		if end > start {
			emit(lowerASCII(w[start:end]), false)
			parts++
		}
		start = end
	}
	for i := 1; i < len(w); i++ {
		prev, cur := classOf(rune(w[i-1])), classOf(rune(w[i]))
		switch {
		case (prev == clsDigit) != (cur == clsDigit):
			mixed = true
			cut(i)
		case prev == clsLower && cur == clsUpper:
			cut(i)
		case prev == clsUpper && cur == clsUpper && i+1 < len(w) && classOf(rune(w[i+1])) == clsLower:
			cut(i)
		}
	}
	cut(len(w))
	switch {
	case mixed && parts <= 3 && len(w) <= 5:
		emit(lowerASCII(w), false)
	case !mixed && parts > 1:
		emit(lowerASCII(w), false)
	}
}

// lowerASCII lower-cases an ASCII string, allocating only when needed.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

type runeClass int

const (
	clsLower runeClass = iota
	clsUpper
	clsDigit
	clsOther // letters without case, marks
)

func classOf(r rune) runeClass {
	if r < utf8.RuneSelf {
		switch {
		case '0' <= r && r <= '9':
			return clsDigit
		case 'A' <= r && r <= 'Z':
			return clsUpper
		case 'a' <= r && r <= 'z':
			return clsLower
		}
		return clsOther
	}
	switch {
	case unicode.IsDigit(r):
		return clsDigit
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return clsUpper
	case unicode.IsLower(r):
		return clsLower
	}
	return clsOther
}

// splitIdent splits one alphanumeric run at case and digit boundaries.
func splitIdent(w []rune, emit func(string, bool)) {
	start := 0
	mixed := false // a letter/digit boundary was cut
	parts := 0
	cut := func(end int) {
		if end > start {
			emit(strings.ToLower(string(w[start:end])), false)
			parts++
		}
		start = end
	}
	for i := 1; i < len(w); i++ {
		prev, cur := classOf(w[i-1]), classOf(w[i])
		switch {
		case (prev == clsDigit) != (cur == clsDigit):
			mixed = true
			cut(i)
		case prev == clsLower && cur == clsUpper:
			cut(i)
		case prev == clsUpper && cur == clsUpper && i+1 < len(w) && classOf(w[i+1]) == clsLower:
			// "HTTPServer": cut before the 'S'.
			cut(i)
		}
	}
	cut(len(w))
	switch {
	case mixed && parts <= 3 && len(w) <= 5:
		// Short mixed letter/digit words ("v2", "s3", "mp3", "h264") also
		// keep their joined form: the parts alone lose their meaning.
		emit(strings.ToLower(string(w)), false)
	case !mixed && parts > 1:
		// Mixed-case words keep their joined form too: brand names
		// ("MySQL", "PostgreSQL", "GitHub") are words, not identifiers.
		emit(strings.ToLower(string(w)), false)
	}
}

// analyze is Tokens with the stemmer switchable; extra, if non-nil, receives
// the terms instead of a new slice being returned.
func analyze(s string, stem bool, dst []string) []string {
	return analyzeExt(s, stem, false, dst)
}

// exactMark prefixes the surface form of a word whose stem differs from it
// ("=servers" beside "server"): an exact-form match is extra evidence (a
// plural in a request often names a list operation).
const exactMark = "="

// analyzeExt is analyze that, with exact set, also emits exactMark+surface
// after each term that stemming changed.
func analyzeExt(s string, stem, exact bool, dst []string) []string {
	out := dst
	rawWords(s, func(w string, cjk bool) {
		if cjk {
			out = append(out, w)
			return
		}
		if t := normalizeWord(w, stem); t != "" {
			out = append(out, t)
			if exact && t != w {
				out = append(out, exactMark+w)
			}
		}
	})
	return out
}

// normalizeWord applies stopwords, the single-letter rule and stemming to one
// lower-cased sub-word; it returns "" when the word is dropped.
func normalizeWord(w string, stem bool) string {
	if n := utf8.RuneCountInString(w); n == 1 {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsDigit(r) && r < 0x250 { // single Latin letter
			return ""
		}
	}
	if _, stop := stopwords[w]; stop {
		return ""
	}
	if !stem || !isASCIIAlpha(w) {
		// w may be a substring of a long text: terms outlive it.
		return strings.Clone(w)
	}
	return stemWord(w)
}

func isASCIIAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stemWord is the Snowball English stemmer, with a few irregular forms that
// matter for tool vocabulary folded first.
func stemWord(w string) string {
	if len(w) > 40 { // garbage; stemming buys nothing
		return w
	}
	sh := &stemCache[maphash.String(stemSeed, w)%stemShards]
	sh.mu.RLock()
	v, ok := sh.m[w]
	sh.mu.RUnlock()
	if ok {
		return v
	}
	in := strings.Clone(w) // w may be a substring of a long text
	if r, ok := irregular[w]; ok {
		w = r
	}
	out := english.Stem(w, true)
	if out == in {
		out = in // not the caller's (possibly substring) w
	}
	// The cache is bounded: past stemCacheMax entries a shard starts
	// afresh, so garbage input cannot grow it without limit.
	sh.mu.Lock()
	if sh.m == nil || len(sh.m) >= stemCacheMax/stemShards {
		sh.m = make(map[string]string, 64)
	}
	sh.m[in] = out
	sh.mu.Unlock()
	return out
}

const (
	stemCacheMax = 1 << 16
	stemShards   = 32
)

// stemCache: word -> stem, sharded so that concurrent analysers rarely
// contend.
var (
	stemSeed  = maphash.MakeSeed()
	stemCache [stemShards]struct {
		mu sync.RWMutex
		m  map[string]string
		_  [32]byte // keep shards on separate cache lines
	}
)

var irregular = map[string]string{
	"ran": "run", "running": "run", "wrote": "write", "written": "write",
	"sent": "send", "found": "find", "made": "make", "built": "build",
	"took": "take", "taken": "take", "gave": "give", "given": "give",
	"got": "get", "gotten": "get", "chose": "choose", "chosen": "choose",
	"children": "child", "people": "person", "indices": "index", "indexes": "index",
	"analyses": "analysis", "data": "data", "media": "media",
}

// stopwords: common English function words plus the politeness and
// request-framing words that queries to a tool catalog carry ("please help me
// ..."). Tool vocabulary (get, list, create, file, ...) is never a stopword.
var stopwords = func() map[string]struct{} {
	words := `a about above after again against all am an and any are aren as at be because been before
	being below between both but by can cannot could couldn did didn do does doesn doing don down during
	each few for from further had hadn has hasn have haven having he her here hers herself him himself his
	how i if in into is isn it its itself just let ll me might mightn more most must mustn my myself need needn
	no nor not of off on once only or other ought our ours ourselves out over own re same shall shan she
	should shouldn so some such than that the their theirs them themselves then there these they this those
	through to too under until up ve very was wasn we were weren what when where which while who whom why will
	with won would wouldn you your yours yourself yourselves
	please kindly help want wants wanted like would also could whether via per etc eg ie
	hi hello thanks thank ok okay yes something anything everything someone somebody able`
	m := map[string]struct{}{}
	for _, w := range strings.Fields(words) {
		m[w] = struct{}{}
	}
	return m
}()

// analyzeWhole is analyze without identifier splitting (for ablations): words
// are maximal letter/digit runs, lower-cased.
func analyzeWhole(s string, stem bool, dst []string) []string {
	out := dst
	var word []rune
	flush := func() {
		if len(word) > 0 {
			if t := normalizeWord(strings.ToLower(string(word)), stem); t != "" {
				out = append(out, t)
			}
			word = word[:0]
		}
	}
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			word = append(word, r)
		} else {
			flush()
		}
	}
	flush()
	return out
}

// isAuxTerm reports whether t is an auxiliary term (an exact surface form or
// a word pair) that does not count in field lengths.
func isAuxTerm(t string) bool {
	return strings.HasPrefix(t, exactMark) || strings.IndexByte(t, ' ') >= 0
}

// appendPlain appends the plain (non-auxiliary) terms of terms to dst.
func appendPlain(dst, terms []string) []string {
	for _, t := range terms {
		if !isAuxTerm(t) {
			dst = append(dst, t)
		}
	}
	return dst
}

// pairSep joins the words of an indexed word pair ("speech text").
const pairSep = " "

func isPair(t string) bool { return strings.Contains(t, pairSep) }

// appendPairs appends the pairs of adjacent plain terms among the first span
// terms of terms.
func appendPairs(terms []string, span int) []string {
	prev := ""
	for _, t := range terms[:span] {
		if isAuxTerm(t) {
			continue
		}
		if prev != "" {
			terms = append(terms, prev+pairSep+t)
		}
		prev = t
	}
	return terms
}
