package index

import (
	"slices"
	"testing"
)

func TestWordPairs(t *testing.T) {
	docs := []Doc{
		{ID: "s.stt", Name: "speech_recognize", Description: "Convert speech to text from an audio file."},
		{ID: "s.tts", Name: "speech_synthesize", Description: "Convert text to speech and write an audio file."},
	}
	for _, tc := range []struct{ q, want string }{
		{"convert speech to text", "s.stt"},
		{"convert text to speech", "s.tts"},
	} {
		ix := New()
		ix.Replace("s", docs)
		if hs := ix.Search(tc.q, Options{}); len(hs) == 0 || hs[0].ID != tc.want {
			t.Errorf("pairs on: %q -> %v, want %s first", tc.q, ids(hs), tc.want)
		}
	}
	if got := appendPairs([]string{"a", "=as", "b", "c"}, 4)[4:]; !slices.Equal(got, []string{"a b", "b c"}) {
		t.Errorf("appendPairs = %q", got)
	}
	if got := appendPairs([]string{"a", "b", "c"}, 2)[3:]; !slices.Equal(got, []string{"a b"}) {
		t.Errorf("appendPairs span 2 = %q", got)
	}
	// Pairs count in no field length and stay out of name coverage.
	ix := New()
	ix.Replace("s", docs)
	seg := ix.segs["s"]
	if seg.docs[0].lens[FieldDescription] != float64(len(Tokens(docs[0].Description))) {
		t.Errorf("description length %v counts pairs", seg.docs[0].lens[FieldDescription])
	}
	for _, n := range seg.docs[0].name {
		if isPair(n) {
			t.Errorf("name terms hold a pair %q", n)
		}
	}
}

func TestPhraseRerank(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PairWeight, cfg.PhraseWeight = 0, 1
	ix := NewWithConfig(cfg)
	ix.Replace("s", []Doc{
		{ID: "s.stt", Name: "recognize", Description: "Convert speech to text from an audio file."},
		{ID: "s.tts", Name: "synthesize", Description: "Convert text to speech and write an audio file."},
	})
	if hs := ix.Search("text to speech please", Options{}); len(hs) == 0 || hs[0].ID != "s.tts" {
		t.Errorf("phrase re-rank: %v", ids(hs))
	}
}

func TestImpliedTerms(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ImpliedTime, cfg.ImpliedWrite, cfg.ImpliedWeb = 0.5, 1, 0.4
	ix := NewWithConfig(cfg)
	has := func(q, term string) bool {
		return slices.ContainsFunc(ix.impliedTerms(q), func(e expansion) bool { return e.term == term })
	}
	for _, tc := range []struct {
		q, term string
		want    bool
	}{
		{"book a hotel for tomorrow", "time", true},
		{"trains next Wednesday", "date", true},
		{"BTC over the last 24h", "time", true},
		{"the next step", "time", false},
		{"save it to /root/markdown/a.md", "write", true},
		{"read /root/markdown/a.md", "write", false},
		{"save the draft", "write", false}, // no path
		{"find the best prices online", "browser", true},
		{"open https://example.com/x", "url", true},
		{"list my repositories", "browser", false},
	} {
		if got := has(tc.q, tc.term); got != tc.want {
			t.Errorf("impliedTerms(%q) has %q = %v, want %v (%v)", tc.q, tc.term, got, tc.want, ix.impliedTerms(tc.q))
		}
	}
	// By default only the write cue is on: time and web cues did not help both sets.
	got := New().impliedTerms("tomorrow, save to /a/b.md, buy online")
	if len(got) == 0 || slices.ContainsFunc(got, func(e expansion) bool { return e.term == "time" || e.term == "browser" }) {
		t.Errorf("default implied terms = %v, want the write cue only", got)
	}
}

func TestSplitClausesOpt(t *testing.T) {
	got := splitClausesOpt("1. Fetch the page 2. summarize the page 3) translate the summary lastly email the summary to Bob", true, false)
	want := []string{"Fetch the page", "summarize the page", "translate the summary", "email the summary to Bob"}
	if !slices.Equal(got, want) {
		t.Errorf("steps: %q, want %q", got, want)
	}
	got = splitClausesOpt("Assess parks, green spaces, schools and hospitals near me", false, true)
	if len(got) != 1 {
		t.Errorf("verbs: list items must stay with their clause: %q", got)
	}
	got = splitClausesOpt("Find the weather, then book a table", false, true)
	if len(got) != 2 {
		t.Errorf("verbs: %q", got)
	}
	// Without options it is splitClauses.
	q := "Read a.xlsx, plot it and then save it to /root/b.png. Finally email it."
	if !slices.Equal(splitClausesOpt(q, false, false), splitClauses(q)) {
		t.Error("splitClausesOpt(q, false, false) != splitClauses(q)")
	}
}

func TestClauseQuota(t *testing.T) {
	s := func(slots ...uint32) []scored {
		out := make([]scored, len(slots))
		for i, x := range slots {
			out[i] = scored{x, float64(100 - i)}
		}
		return out
	}
	fused := s(1, 2, 3, 4, 5, 6, 7)
	clauses := [][]scored{s(6, 1), s(2, 7)}
	got := clauseQuota(fused, clauses, 1, 4)
	var slots []uint32
	for _, x := range got {
		slots = append(slots, x.slot)
	}
	// Clause tops 6 and 2 must be in the first 4; 1 and 2 keep their places.
	if !slices.Equal(slots[:4], []uint32{1, 2, 3, 6}) || len(slots) != 7 {
		t.Errorf("clauseQuota = %v", slots)
	}
	seen := map[uint32]bool{}
	for _, x := range slots {
		if seen[x] {
			t.Fatalf("duplicate %d in %v", x, slots)
		}
		seen[x] = true
	}
}

func TestLexiconPhrases(t *testing.T) {
	lx := lexFor(true)
	has := func(phr bool, base []string, term string) bool {
		return slices.ContainsFunc(lx.expandInto(nil, base, 0.9, 0.4, 0.5, true, phr), func(e expansion) bool { return e.term == term })
	}
	base := Tokens("open a pull request")
	if !has(true, base, "pr") || has(false, base, "pr") {
		t.Error("the phrase 'pull request' should expand to 'pr' only with phrases on")
	}
	if has(true, Tokens("pull my new request"), "pr") {
		t.Error("a non-contiguous phrase must not expand")
	}
}

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"List repos. Then more.": "List repos",
		"v1.2 is out! Yes":       "v1.2 is out",
		"no end":                 "no end",
		"获取新闻。提供资讯":              "获取新闻",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOptionalTechniques: every optional technique keeps the basic
// contract (deterministic, sorted, filters honoured) on a small catalog.
func TestOptionalTechniques(t *testing.T) {
	ix := NewWithConfig(allOnConfig())
	for _, p := range []string{"github", "fs", "slack"} {
		ix.Replace(p, sampleDocs[p])
	}
	for _, q := range []string{"list repos", "Read the file and post a message to slack, then open an issue tomorrow, save it to /tmp/a.md", "buy a file online"} {
		a := ix.Search(q, Options{Limit: 5})
		if len(a) == 0 {
			t.Errorf("%q: no hits", q)
		}
		for i := 1; i < len(a); i++ {
			if a[i].Score > a[i-1].Score {
				t.Errorf("%q: unsorted %v", q, a)
			}
		}
		if b := ix.Search(q, Options{Limit: 5}); !slices.Equal(ids(a), ids(b)) {
			t.Errorf("%q: not deterministic", q)
		}
		for _, h := range ix.Search(q, Options{Provider: "fs"}) {
			if h.Provider != "fs" {
				t.Errorf("filter leak %v", h)
			}
		}
	}
}

func TestActionClasses(t *testing.T) {
	for w, want := range map[string]actionClass{
		"list": actRead, "listed": actRead, "shows": actRead, "creating": actWrite, "created": actWrite,
		"updates": actWrite, "set": actWrite, "settings": 0, "setting": 0, "deleted": actDelete, "storage": 0,
	} {
		if got := verbClass(w); got != want {
			t.Errorf("verbClass(%q) = %b, want %b", w, got, want)
		}
	}
	if got := textActions("appconfig_kv_set"); got != actWrite {
		t.Errorf("textActions(kv_set) = %b", got)
	}
	cfg := DefaultConfig()
	cfg.ActionWeight = 1
	ix := NewWithConfig(cfg)
	ix.Replace("kv", []Doc{
		{ID: "kv.set", Name: "kv_set", Description: "Set key-value settings in a store."},
		{ID: "kv.get", Name: "kv_get", Description: "Key-value settings of a store."},
	})
	if hs := ix.Search("list all key-value settings", Options{}); len(hs) == 0 || hs[0].ID != "kv.get" {
		t.Errorf("action consistency: %v", ids(hs))
	}
}
