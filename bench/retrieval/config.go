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
	"enum": index.FieldEnum, "provider": index.FieldProvider,
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
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("--set %s: %v", k, err)
		}
		f(x)
	}
	return nil
}

// ablation is one row of the ablation table: a change to the best
// configuration.
type ablation struct {
	name   string
	change string
}

// ablations: each row switches one technique off (or, for techniques that
// are off by default, on) relative to the default configuration.
var ablations = []ablation{
	{"default (all techniques)", ""},
	{"plain BM25 (one field weight, no splitting/stemming/lexicon/stages)", "split=0,stem=0,exact=0,abbrev=0,syn=0,prov=0,clauses=0,fieldidf=0,qtflog=0,decomp=0,artifact=0,namecov=0,w.name=1,w.desc=1,w.params=1,w.enum=0,w.provider=1,b.name=0.75"},
	{"- identifier splitting", "split=0"},
	{"- stemming (and exact-form bonus)", "stem=0"},
	{"- exact-form bonus", "exact=0"},
	{"- lexicon (abbreviations+synonyms)", "abbrev=0,syn=0"},
	{"- synonyms", "syn=0"},
	{"- abbreviations", "abbrev=0"},
	{"- BM25F field weights (uniform)", "w.name=1,w.desc=1,w.params=1,w.enum=1,w.provider=1,b.name=0.75"},
	{"- per-field IDF", "fieldidf=0"},
	{"- parameter names/descriptions", "w.params=0"},
	{"- enum values", "w.enum=0"},
	{"- provider field", "w.provider=0"},
	{"- query tf dampening", "qtflog=0"},
	{"- decompounding (cosmosdb, event hub)", "decomp=0"},
	{"- path/URL artifacts", "artifact=0"},
	{"- name coverage", "namecov=0"},
	{"- two-stage provider fusion", "prov=0"},
	{"- clause splitting + RRF", "clauses=0"},
	{"+ name segmentation (off by default)", "segname=1"},
	{"+ provider diversity 0.3 (off by default)", "div=0.3"},
}

func runAblation(w io.Writer, sets []dataset, base index.Config) error {
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
			r := evaluate(ds, cfg, ks)
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
