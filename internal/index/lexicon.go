package index

import (
	"math"
	"slices"
	"strings"
)

// The built-in lexicon: general vocabulary of tool catalogs (verbs of CRUD and
// search, common nouns and their abbreviations, file formats). It is applied
// to queries only: a query term also matches its lexicon neighbours, at a
// reduced weight. It deliberately holds no product- or data-set-specific
// terms.
//
// abbreviations are (near-)exact equivalents and expand at weight
// Config.AbbrevWeight; synonyms are related words and expand at
// Config.SynonymWeight. A member may be several words ("pull request"); it
// then expands to each of its words with the weight split between them.
var abbreviationGroups = [][]string{
	{"repo", "repository"},
	{"msg", "message"},
	{"db", "database"},
	{"doc", "document"},
	{"docs", "documentation"},
	{"config", "configuration", "conf", "cfg"},
	{"info", "information"},
	{"dir", "directory", "folder"},
	{"img", "image"},
	{"pic", "picture"},
	{"stat", "statistic"},
	{"auth", "authentication"},
	{"env", "environment"},
	{"k8s", "kubernetes"},
	{"vm", "virtual machine"},
	{"pr", "pull request"},
	{"calc", "calculate"},
	{"num", "number"},
	{"addr", "address"},
	{"app", "application"},
	{"spec", "specification"},
	{"desc", "description"},
	{"param", "parameter"},
	{"arg", "argument"},
	{"pkg", "package"},
	{"lib", "library"},
	{"dep", "dependency"},
	{"ppt", "pptx", "powerpoint"},
	{"docx", "word document"},
	{"xls", "xlsx", "excel", "spreadsheet"},
	{"md", "markdown"},
	{"txt", "text"},
	{"js", "javascript"},
	{"ts", "typescript"},
	{"py", "python"},
	{"url", "uri", "link"},
	{"exec", "execute"},
	{"cert", "certificate"},
	{"perm", "permission"},
	{"admin", "administrator"},
	{"org", "organization", "organisation"},
	{"sub", "subscription"},
	{"rg", "resource group"},
	{"kv", "key value"},
	{"ip", "address"},
	{"dns", "domain"},
	{"ai", "artificial intelligence"},
	{"llm", "language model"},
	{"ml", "machine learning"},
	{"os", "operating system"},
	{"cpu", "processor"},
	{"mem", "memory"},
	{"tmp", "temporary"},
	{"sql", "database"},
	{"ci", "continuous integration"},
	{"sms", "text message"},
	{"tz", "timezone"},
	{"usd", "dollar"},
	{"btc", "bitcoin"},
	{"eth", "ethereum"},
	{"crypto", "cryptocurrency"},
	{"geo", "geographic"},
	{"lat", "latitude"},
	{"lon", "lng", "longitude"},
	{"nav", "navigation"},
	{"ui", "interface"},
	{"cli", "command line"},
	{"api", "endpoint"},
	{"qr", "qrcode"},
}

var synonymGroups = [][]string{
	// verbs
	{"get", "fetch", "retrieve", "obtain", "read", "show", "display", "view", "describe", "check", "inspect"},
	{"list", "enumerate", "show", "browse"},
	{"create", "add", "new", "make", "generate", "build", "insert", "provision", "produce", "compose", "draft", "write"},
	{"delete", "remove", "destroy", "drop", "erase", "purge", "clear", "uninstall"},
	{"update", "edit", "modify", "change", "set", "patch", "alter", "adjust", "configure", "replace"},
	{"search", "find", "query", "lookup", "look", "locate", "discover", "seek"},
	{"run", "execute", "invoke", "launch", "start", "trigger", "call"},
	{"stop", "terminate", "kill", "halt", "cancel", "abort", "end"},
	{"save", "write", "store", "persist", "export", "output"},
	{"open", "load", "import", "read"},
	{"send", "post", "publish", "submit", "share", "notify"},
	{"download", "fetch", "pull"},
	{"upload", "push", "put"},
	{"copy", "duplicate", "clone"},
	{"move", "rename", "relocate", "transfer"},
	{"compare", "diff", "difference"},
	{"convert", "transform", "translate", "export"},
	{"summarize", "summary", "overview", "digest"},
	{"analyze", "analysis", "evaluate", "assess", "examine", "review", "audit", "inspect"},
	{"calculate", "compute", "count", "measure"},
	{"install", "setup", "deploy"},
	{"deploy", "release", "ship", "rollout"},
	{"monitor", "watch", "track", "observe"},
	{"validate", "verify", "check", "test", "lint"},
	{"schedule", "book", "reserve", "plan"},
	{"navigate", "go", "visit", "browse"},
	{"click", "press", "tap"},
	{"type", "fill", "enter", "input"},
	{"screenshot", "capture", "snapshot"},
	{"recommend", "suggest", "advise"},
	{"connect", "link", "attach", "join"},
	// nouns
	{"file", "document"},
	{"image", "picture", "photo", "icon", "graphic"},
	{"chart", "graph", "plot", "diagram", "visualization", "visualize"},
	{"presentation", "slide", "deck", "powerpoint"},
	{"spreadsheet", "sheet", "workbook", "table"},
	{"video", "movie", "clip"},
	{"audio", "sound", "music", "song", "track"},
	{"speech", "voice", "spoken"},
	{"message", "chat", "conversation"},
	{"email", "mail", "inbox"},
	{"user", "account", "profile", "member"},
	{"note", "memo", "memory"},
	{"task", "todo", "job", "issue"},
	{"error", "bug", "failure", "problem", "exception"},
	{"log", "trace", "event"},
	{"metric", "statistic", "measurement", "telemetry"},
	{"alert", "alarm", "notification", "warning"},
	{"secret", "credential", "password", "token", "key"},
	{"permission", "role", "access", "privilege"},
	{"container", "docker"},
	{"cluster", "node"},
	{"webpage", "page", "website", "site", "url", "web"},
	{"news", "headline", "article", "story"},
	{"article", "paper", "publication", "preprint"},
	{"price", "quote", "cost", "rate", "value"},
	{"time", "date", "clock", "current", "today", "now", "timezone"},
	{"location", "place", "address", "geocode", "coordinate", "position"},
	{"code", "source", "snippet"},
	{"component", "widget", "element"},
	{"dependency", "package", "library", "module"},
	{"version", "release"},
	{"commit", "change", "revision"},
	{"branch", "fork"},
	{"detail", "information", "info", "metadata", "property", "attribute"},
	{"history", "historical", "past", "previous"},
	{"content", "text", "body"},
	{"directory", "folder", "tree"},
	{"translate", "translation", "language"},
	{"company", "business", "organization", "firm"},
}

type expansion struct {
	term   string
	weight float64
}

// lexicon maps a stemmed query term to its neighbours.
type lexicon struct {
	abbrev map[string][]lexEntry
	syn    map[string][]lexEntry
	// phrases: multi-word members ("pull request", "text to speech"),
	// which trigger an expansion when their words appear contiguously in a
	// request (Config.LexiconPhrases).
	phrases []lexPhrase
}

type lexPhrase struct {
	terms   []string
	targets []lexEntry
	abbrev  bool // an abbreviation group (else synonyms)
}

type lexEntry struct {
	terms []string // stemmed words of one member
}

func buildLexicon(stem bool) *lexicon {
	lx := &lexicon{abbrev: map[string][]lexEntry{}, syn: map[string][]lexEntry{}}
	add := func(dst map[string][]lexEntry, groups [][]string, abbrev bool) {
		for _, g := range groups {
			members := make([][]string, 0, len(g))
			for _, m := range g {
				var ts []string
				for _, w := range strings.Fields(m) {
					if t := normalizeWord(strings.ToLower(w), stem); t != "" {
						ts = append(ts, t)
					}
				}
				if len(ts) > 0 {
					members = append(members, ts)
				}
			}
			for i, mi := range members {
				if len(mi) != 1 { // a phrase triggers only as a phrase
					ph := lexPhrase{terms: mi, abbrev: abbrev}
					for j, mj := range members {
						if i != j && !slices.Equal(mi, mj) {
							ph.targets = append(ph.targets, lexEntry{terms: mj})
						}
					}
					lx.phrases = append(lx.phrases, ph)
					continue
				}
				key := mi[0]
				for j, mj := range members {
					if i == j || (len(mj) == 1 && mj[0] == key) {
						continue
					}
					dst[key] = append(dst[key], lexEntry{terms: mj})
				}
			}
		}
	}
	add(lx.abbrev, abbreviationGroups, true)
	add(lx.syn, synonymGroups, false)
	return lx
}

// expandBuf is reusable working memory for expandInto.
type expandBuf struct {
	w      map[string]float64
	isBase map[string]bool
}

// expandInto returns the weighted query terms for the given base terms:
// each base term at weight 1 (summed over repeats), plus its lexicon
// neighbours. A term reached several ways keeps its highest weight; base
// terms keep theirs. b is reusable working memory (nil allocates).
func (lx *lexicon) expandInto(b *expandBuf, base []string, abbrevW, synW, exactW float64, qtfLog, phrases bool) []expansion {
	if b == nil {
		b = &expandBuf{}
	}
	if b.w == nil {
		b.w, b.isBase = map[string]float64{}, map[string]bool{}
	}
	clear(b.w)
	clear(b.isBase)
	w, isBase := b.w, b.isBase
	for _, t := range base {
		if strings.HasPrefix(t, exactMark) {
			w[t] += exactW
		} else {
			w[t]++
		}
		isBase[t] = true
	}
	put := func(t string, x float64) {
		if isBase[t] {
			return
		}
		if x > w[t] {
			w[t] = x
		}
	}
	if qtfLog {
		for t, x := range w {
			if x > 1 {
				w[t] = 1 + math.Log(x)
			}
		}
	}
	if lx != nil {
		// Expanding a repeated base term again changes nothing (put keeps
		// the larger weight).
		for _, t := range base {
			if abbrevW > 0 {
				for _, e := range lx.abbrev[t] {
					for _, u := range e.terms {
						put(u, abbrevW/float64(len(e.terms)))
					}
				}
			}
			if synW > 0 {
				for _, e := range lx.syn[t] {
					for _, u := range e.terms {
						put(u, synW/float64(len(e.terms)))
					}
				}
			}
		}
	}
	if lx != nil && phrases {
		lx.expandPhrases(base, func(ph *lexPhrase) {
			x := synW
			if ph.abbrev {
				x = abbrevW
			}
			if x <= 0 {
				return
			}
			for _, e := range ph.targets {
				for _, u := range e.terms {
					put(u, x/float64(len(e.terms)))
				}
			}
		})
	}
	out := make([]expansion, 0, len(w))
	for t, x := range w {
		out = append(out, expansion{t, x})
	}
	slices.SortFunc(out, func(a, b expansion) int { return strings.Compare(a.term, b.term) })
	return out
}

// expandPhrases calls f for each lexicon phrase whose words appear
// contiguously among the plain (non-exact) base terms.
func (lx *lexicon) expandPhrases(base []string, f func(*lexPhrase)) {
	var plain []string
	for _, t := range base {
		if !strings.HasPrefix(t, exactMark) {
			plain = append(plain, t)
		}
	}
	for i := range lx.phrases {
		ph := &lx.phrases[i]
		n := len(ph.terms)
		for j := 0; j+n <= len(plain); j++ {
			if slices.Equal(plain[j:j+n], ph.terms) {
				f(ph)
				break
			}
		}
	}
}
