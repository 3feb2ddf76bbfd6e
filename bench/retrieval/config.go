package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/agent-tools/agent-tools/internal/index"
)

var fieldKeys = map[string]int{
	"name": index.FieldName, "desc": index.FieldDescription, "params": index.FieldParams,
	"enum": index.FieldEnum, "provider": index.FieldProvider, "summary": index.FieldSummary,
}

// setters maps --set keys to index.Config fields.
func setters(c *index.Config) map[string]func(float64) {
	m := map[string]func(float64){
		"k1":        func(v float64) { c.K1 = v },
		"stem":      func(v float64) { c.Stem = v != 0 },
		"split":     func(v float64) { c.SplitIdent = v != 0 },
		"abbrev":    func(v float64) { c.AbbrevWeight = v },
		"syn":       func(v float64) { c.SynonymWeight = v },
		"prov":      func(v float64) { c.ProviderWeight = v },
		"clauses":   func(v float64) { c.Clauses = v != 0 },
		"clausemin": func(v float64) { c.ClauseMinTokens = int(v) },
		"clausew":   func(v float64) { c.ClauseWeight = v },
		"rrfk":      func(v float64) { c.RRFK = v },
		"div":       func(v float64) { c.Diversity = v },
		"fieldidf":  func(v float64) { c.FieldIDF = v != 0 },
		"exact":     func(v float64) { c.ExactWeight = v },
		"decomp":    func(v float64) { c.DecompoundWeight = v },
		"artifact":  func(v float64) { c.ArtifactWeight = v },
		"namecov":   func(v float64) { c.NameCoverage = v },
		"qtflog":    func(v float64) { c.QueryTFLog = v != 0 },
		"segname":   func(v float64) { c.SegmentNames = v != 0 },
		"itime":     func(v float64) { c.ImpliedTime = v },
		"iwrite":    func(v float64) { c.ImpliedWrite = v },
		"iweb":      func(v float64) { c.ImpliedWeb = v },
		"prf":       func(v float64) { c.PRFTerms = int(v) },
		"phrase":    func(v float64) { c.PhraseWeight = v },
		"action":    func(v float64) { c.ActionWeight = v },
		"pair":      func(v float64) { c.PairWeight = v },
		"pairspan":  func(v float64) { c.PairSpan = int(v) },
		"phrases":   func(v float64) { c.LexiconPhrases = v != 0 },
		"pathw":     func(v float64) { c.PathTerms = v },
		"csteps":    func(v float64) { c.ClauseSteps = v != 0 },
		"cquota":    func(v float64) { c.ClauseQuota = int(v) },
		"cverbs":    func(v float64) { c.ClauseVerbs = v != 0 },
		"prfdocs":   func(v float64) { c.PRFDocs = int(v) },
		"prfw":      func(v float64) { c.PRFWeight = v },
		"assoc":     func(v float64) { c.AssocTerms = int(v) },
		"assocdf":   func(v float64) { c.AssocMaxDF = int(v) },
		"assocw":    func(v float64) { c.AssocWeight = v },
		"cjk":       func(v float64) { c.CJKGloss = v != 0 },
		"fusion":    nil, // a name, set by applySet: rrf | blend
		"semw":      func(v float64) { c.SemanticWeight = v },
		"semk":      func(v float64) { c.SemanticRRFK = v },
		"semdepth":  func(v float64) { c.SemanticDepth = int(v) },
	}
	for name, f := range fieldKeys {
		f := f
		m["w."+name] = func(v float64) { c.FieldWeight[f] = v }
		m["b."+name] = func(v float64) { c.FieldB[f] = v }
		m["pf."+name] = func(v float64) { c.ProviderFields[f] = v }
	}
	return m
}

func configKeys() []string {
	var c index.Config
	var ks []string
	for k := range setters(&c) {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// applySet applies "key=value,key=value" overrides.
func applySet(c *index.Config, s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	set := setters(c)
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("--set: %q is not key=value", kv)
		}
		f, ok := set[k]
		if !ok {
			return fmt.Errorf("--set: unknown key %q (known: %s)", k, strings.Join(configKeys(), " "))
		}
		if k == "fusion" {
			if v != index.FuseRRF && v != index.FuseBlend {
				return fmt.Errorf("--set fusion: want %s or %s", index.FuseRRF, index.FuseBlend)
			}
			c.SemanticFusion = v
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("--set %s: %v", k, err)
		}
		f(x)
	}
	return nil
}

// ablation is one row of the ablation table: a change to the best
// configuration, with or without the (fake) semantic stage.
type ablation struct {
	name   string
	change string
	embed  bool
}

// ablations: each row switches one technique off (or, for techniques that
// are off by default, on) relative to the default configuration.
var ablations = []ablation{
	{"default (all techniques)", "", false},
	{"plain BM25 (one field weight, no splitting/stemming/lexicon/stages)", "split=0,stem=0,exact=0,abbrev=0,syn=0,prov=0,clauses=0,fieldidf=0,qtflog=0,decomp=0,artifact=0,namecov=0,pair=0,w.name=1,w.desc=1,w.params=1,w.enum=0,w.provider=1,b.name=0.75,cjk=0", false},
	{"- identifier splitting", "split=0", false},
	{"- stemming (and exact-form bonus)", "stem=0", false},
	{"- exact-form bonus", "exact=0", false},
	{"- lexicon (abbreviations+synonyms)", "abbrev=0,syn=0", false},
	{"- synonyms", "syn=0", false},
	{"- abbreviations", "abbrev=0", false},
	{"- BM25F field weights (uniform)", "w.name=1,w.desc=1,w.params=1,w.enum=1,w.provider=1,b.name=0.75", false},
	{"- per-field IDF", "fieldidf=0", false},
	{"- parameter names/descriptions", "w.params=0", false},
	{"- enum values", "w.enum=0", false},
	{"- provider field", "w.provider=0", false},
	{"- query tf dampening", "qtflog=0", false},
	{"- decompounding (cosmosdb, event hub)", "decomp=0", false},
	{"- path/URL artifacts", "artifact=0", false},
	{"- name coverage", "namecov=0", false},
	{"- two-stage provider fusion", "prov=0", false},
	{"- clause splitting + RRF", "clauses=0", false},
	{"- word pairs (names + first 16 description words)", "pair=0", false},
	{"  word pairs over whole descriptions (larger index)", "pairspan=0", false},
	{"+ phrase re-rank of candidates (off)", "phrase=0.4", false},
	{"+ lexicon phrases trigger expansions (off)", "phrases=1", false},
	{"+ action consistency (read/write/delete) 0.2 (off)", "action=0.2", false},
	{"+ implied: relative dates -> time tools (off)", "itime=0.5", false},
	{"- implied: path + saving verb -> write", "iwrite=0", false},
	{"+ implied: web/shopping words -> browser/fetch (off)", "iweb=0.4", false},
	{"+ path/URL words down-weighted to 0.5 (off)", "pathw=0.5", false},
	{"+ pseudo-relevance feedback, RM3 5 terms/3 docs (off)", "prf=5,prfdocs=3,prfw=0.3", false},
	{"+ catalog term association, 1 term/rare word (off)", "assoc=1,assocdf=5,assocw=0.3", false},
	{"+ clause split at numbered steps, more connectives (off)", "csteps=1", false},
	{"+ clause needs an action verb (off)", "cverbs=1", false},
	{"+ per-clause quota: each clause's top 1 in the top 10 (off)", "cquota=1", false},
	{"+ description first-sentence field 1.0, description 0.7 (off)", "w.summary=1,b.summary=0.5,w.desc=0.7", false},
	{"+ name segmentation (off)", "segname=1", false},
	{"+ provider diversity 0.3 (off)", "div=0.3", false},
	{"- CJK gloss (CC-CEDICT)", "cjk=0", false},
	{"+ fake embeddings, RRF (weight 1, k 60)", "", true},
	{"+ fake embeddings, RRF weight 0.5", "semw=0.5", true},
	{"+ fake embeddings, blend 0.3", "fusion=blend,semw=0.3", true},
	{"+ fake embeddings, blend 0.5", "fusion=blend,semw=0.5", true},
}

func runAblation(w io.Writer, sets []dataset, base index.Config) error {
	fake, _, closeFake, err := semanticFactory("fake", "fake", "")
	if err != nil {
		return err
	}
	defer closeFake()
	ks := []int{1, 5, 10}
	fmt.Fprintf(w, "| configuration |")
	for _, ds := range sets {
		fmt.Fprintf(w, " %s R@1 | R@5 | R@10 | MRR |", ds.name)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "| --- |")
	for range sets {
		fmt.Fprint(w, " ---: | ---: | ---: | ---: |")
	}
	fmt.Fprintln(w)
	ref := make([]report, len(sets))
	for i, a := range ablations {
		cfg := base
		if err := applySet(&cfg, a.change); err != nil {
			return err
		}
		fmt.Fprintf(w, "| %s |", a.name)
		for j, ds := range sets {
			var sem newSemantic
			if a.embed {
				sem = fake
			}
			r := evaluate(ds, cfg, ks, sem)
			if i == 0 {
				ref[j] = r
				fmt.Fprintf(w, " %.3f | %.3f | %.3f | %.3f |", r.Recall[1], r.Recall[5], r.Recall[10], r.MRR)
				continue
			}
			fmt.Fprintf(w, " %+.3f | %+.3f | %+.3f | %+.3f |",
				r.Recall[1]-ref[j].Recall[1], r.Recall[5]-ref[j].Recall[5], r.Recall[10]-ref[j].Recall[10], r.MRR-ref[j].MRR)
		}
		fmt.Fprintln(w)
	}
	return nil
}
