package embedding

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/tests/embedtest"
)

// A synthetic catalog where a tool's name and its description use
// different words for one concept (made-up words: no lexicon relates
// them), as real tools often do ("city_forecast" / "will it rain"). Half
// the descriptions also say the name's word, so the lexical ranking finds
// half the held-out queries and the other half only by chance.
const calConcepts = 60

func conceptWord(kind string, c, i int) string {
	// Letters only, distinct per concept: "zqa", "zqb", ...
	const letters = "bcdfghjklmnpqrstvwxz"
	return fmt.Sprintf("%s%c%c%c", kind, letters[c%20], letters[(c/20)%20], "aeiou"[i%5])
}

func calCatalog() (order []string, by map[string][]index.Doc) {
	by = map[string][]index.Doc{}
	for c := range calConcepts {
		p := fmt.Sprintf("svc%d", c%6)
		if len(by[p]) == 0 {
			order = append(order, p)
		}
		desc := fmt.Sprintf("Use this to %s the %s records and %s them.", conceptWord("dv", c, 0), conceptWord("dn", c, 1), conceptWord("dq", c, 2))
		if c%2 == 0 {
			desc += " Also called " + conceptWord("nm", c, 0) + "."
		}
		by[p] = append(by[p], index.Doc{
			ID: fmt.Sprintf("%s.tool%d", p, c), Kind: "tool", Provider: p, ProviderDescription: "A service.",
			Name:        conceptWord("nm", c, 0) + "_run",
			Description: desc,
			Params: []index.Param{{Name: conceptWord("pn", c, 3),
				Description: fmt.Sprintf("Which %s of the %s to use.", conceptWord("pd", c, 4), conceptWord("dn", c, 1))}},
		})
	}
	return order, by
}

var (
	conceptsOnce sync.Once
	concepts     map[string]int
)

// informative is a model that knows the catalog's concepts: every word of
// concept c adds to dimension c, any other word a little to a hashed one.
func informative(text string) []float32 {
	conceptsOnce.Do(func() {
		concepts = map[string]int{}
		for k := range calConcepts {
			for _, kind := range []string{"nm", "dv", "dn", "dq", "pn", "pd"} {
				for i := range 5 {
					concepts[conceptWord(kind, k, i)] = k
				}
			}
		}
	})
	v := make([]float32, 128)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if c, ok := concepts[w]; ok {
			v[c]++
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[calConcepts+int(h.Sum32()%(128-calConcepts))] += 0.3
	}
	return v
}

func calStore(t *testing.T, model embedtest.Func, cache *Cache) (*Store, *index.Index) {
	t.Helper()
	st := NewStore(model, Options{Model: "m", Cache: cache, CalibrationDelay: time.Millisecond})
	t.Cleanup(func() { st.Close() })
	ix := index.New()
	ix.SetSemantic(st)
	order, by := calCatalog()
	for _, p := range order {
		ix.Replace(p, by[p])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return st, ix
}

// TestCalibrationPicksLexicalForNoise: a model that returns pseudo-random
// vectors makes every fusion worse on the self-check; the store chooses
// the lexical ranking alone, and searches are exactly lexical.
func TestCalibrationPicksLexicalForNoise(t *testing.T) {
	st, ix := calStore(t, embedtest.Noise, nil)
	s := st.Status()
	if s.WeightFrom != WeightSelfCheck || s.SelfCheck == nil {
		t.Fatalf("status %+v: no self-check", s)
	}
	c := s.SelfCheck
	t.Logf("%s", c.Summary())
	for _, f := range c.Fused {
		t.Logf("  w %.1f: %s", f.Weight, f.Figures)
	}
	if c.Weight != 0 || st.FusionWeight() != 0 {
		t.Errorf("noise model: weight %g, want 0 (lexical alone)", c.Weight)
	}
	if c.Queries < index.CalibrationMinQueries || c.Docs != calConcepts {
		t.Errorf("self-check over %d docs, %d queries", c.Docs, c.Queries)
	}
	if c.Model.R5 > 0.3 {
		t.Errorf("noise model scores %s on the self-check: the check leaks", c.Model)
	}
	lex := index.New()
	order, by := calCatalog()
	for _, p := range order {
		lex.Replace(p, by[p])
	}
	for _, q := range []string{"dvbba records", "nmcba", "which pdfba", "use this"} {
		if got, want := hitIDs(ix.Search(q, index.Options{})), hitIDs(lex.Search(q, index.Options{})); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: %v, want the lexical %v", q, got, want)
		}
	}
	if status, reason := st.Diagnose(); status != "ok" || !strings.Contains(reason, "chosen lexical ranking alone") {
		t.Errorf("doctor: %s %q", status, reason)
	}
}

// TestCalibrationPicksFusionForInformativeModel: a model that relates a
// tool's description to its name beats the lexical ranking on the
// held-out queries; the store fuses at the weight chosen, and a search in
// the description's words finds a tool whose indexed text shares none.
func TestCalibrationPicksFusionForInformativeModel(t *testing.T) {
	st, ix := calStore(t, informative, nil)
	c := st.Status().SelfCheck
	if c == nil {
		t.Fatal("no self-check")
	}
	t.Logf("%s", c.Summary())
	if c.Weight <= 0 || st.FusionWeight() != c.Weight {
		t.Fatalf("informative model: weight %g, want a fusion", c.Weight)
	}
	var chosen index.Figures
	for _, f := range c.Fused {
		if f.Weight == c.Weight {
			chosen = f.Figures
		}
	}
	if chosen.MRR <= c.Lexical.MRR || chosen.R1 < c.Lexical.R1 || chosen.R5 < c.Lexical.R5 {
		t.Errorf("chosen %s, lexical %s", chosen, c.Lexical)
	}
	// Tool 1 (odd: its description never names it) by its description's words.
	q := conceptWord("dv", 1, 0) + " " + conceptWord("dq", 1, 2)
	if hs := ix.Search(q, index.Options{Limit: 3}); len(hs) == 0 || hs[0].ID != "svc1.tool1" {
		t.Errorf("%q: %v, want svc1.tool1 first", q, hitIDs(hs))
	}
	if _, reason := st.Diagnose(); !strings.Contains(reason, fmt.Sprintf("chosen fusion weight %g", c.Weight)) {
		t.Errorf("doctor: %q", reason)
	}
}

// TestCalibrationCachedAndRedone: the self-check's outcome is kept in the
// vector cache (a second store embeds nothing and calls no model), and a
// catalog change runs it again.
func TestCalibrationCachedAndRedone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.bin")
	calls := 0
	counting := func(s string) []float32 { calls++; return informative(s) }
	cache, err := OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := calStore(t, counting, cache)
	first := *st.Status().SelfCheck
	st.Close()
	calls = 0
	cache, err = OpenCache(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ix := calStore(t, counting, cache)
	if calls != 0 {
		t.Errorf("second store embedded %d texts, want 0", calls)
	}
	if got := *st.Status().SelfCheck; got.Summary() != first.Summary() || got.Weight != first.Weight {
		t.Errorf("cached self-check %s, want %s", got.Summary(), first.Summary())
	}
	ix.Remove("svc0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := st.Status().SelfCheck; got.Docs != calConcepts-calConcepts/6 {
		t.Errorf("after a provider left: self-check over %d docs", got.Docs)
	}
}

// TestConfiguredWeightSkipsCalibration: index.semantic.weight is used as
// it is, with no self-check.
func TestConfiguredWeightSkipsCalibration(t *testing.T) {
	w := 0.3
	st := NewStore(embedtest.Func(embedtest.Noise), Options{Model: "m", Weight: &w})
	defer st.Close()
	ix := index.New()
	ix.SetSemantic(st)
	order, by := calCatalog()
	for _, p := range order {
		ix.Replace(p, by[p])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if s := st.Status(); s.Weight != 0.3 || s.WeightFrom != WeightConfig || s.SelfCheck != nil {
		t.Errorf("status %+v", s)
	}
	if _, reason := st.Diagnose(); !strings.Contains(reason, "fusion weight 0.3 (index.semantic.weight") {
		t.Errorf("doctor: %q", reason)
	}
}
