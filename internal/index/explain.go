package index

import (
	"slices"
	"strings"
)

// queryWord is one word of a request and the index terms it analyses to.
type queryWord struct {
	surface string
	terms   []string
}

// maxWhyWords bounds the words an explanation names per field.
const maxWhyWords = 4

// queryWords splits a request into its words with their terms (Chinese
// words through their gloss), dropping words that analyse to nothing.
func (ix *Index) queryWords(query string) []queryWord {
	an := ix.analyzer()
	var out []queryWord
	seen := map[string]bool{}
	for _, f := range strings.Fields(query) {
		w := strings.Trim(f, "`'\"()[]<>,;:.!?")
		lw := strings.ToLower(w)
		if w == "" || seen[lw] {
			continue
		}
		seen[lw] = true
		var terms []string
		for _, t := range an(nil, w) {
			if !isAuxTerm(t) {
				terms = append(terms, t)
			}
		}
		if len(terms) > 0 {
			out = append(out, queryWord{surface: lw, terms: terms})
		}
	}
	return out
}

// whyFields are the fields an explanation names, in order.
var whyFields = []struct {
	f    int
	name string
}{{FieldName, "name"}, {FieldDescription, "description"}, {FieldParams, "parameters"}, {FieldEnum, "values"}, {FieldProvider, "provider"}}

// explain says which of the request's words the document holds, per field
// ("name: weather; description: forecast, city"). Called under the read
// lock.
func (ix *Index) explain(seg *segment, doc int, words []queryWord) string {
	var parts []string
	used := map[string]bool{}
	for _, wf := range whyFields {
		if ix.cfg.FieldWeight[wf.f] == 0 {
			continue
		}
		var hit []string
		for _, w := range words {
			if used[w.surface] || len(hit) == maxWhyWords {
				continue
			}
			if seg.hasTerm(w.terms, doc, wf.f) {
				hit = append(hit, w.surface)
				used[w.surface] = true
			}
		}
		if len(hit) > 0 {
			parts = append(parts, wf.name+": "+strings.Join(hit, ", "))
		}
	}
	if len(parts) == 0 {
		return "related words (synonyms, abbreviations or the request's other clauses)"
	}
	return "matched " + strings.Join(parts, "; ")
}

// hasTerm reports whether document doc holds any of terms in field f.
func (seg *segment) hasTerm(terms []string, doc, f int) bool {
	for _, t := range terms {
		ps := seg.post[t]
		i, ok := slices.BinarySearchFunc(ps, uint32(doc), func(p posting, d uint32) int { return int(p.doc) - int(d) })
		if ok && ps[i].tf[f] > 0 {
			return true
		}
	}
	return false
}
