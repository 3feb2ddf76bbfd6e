package index

import (
	"strings"
)

// Implied capabilities: a request often needs a tool it never names. A few
// general, catalog-independent cues are recognised and add the vocabulary of
// the capability they imply (each at its own Config weight, 0 = off):
//
//   - time: a relative date ("tomorrow", "next Wednesday", "the last 24h")
//     implies knowing the current date: adds "time", "date", "current";
//   - write: a file path together with a verb of producing or saving ("save
//     it to /root/a.md", "generate a report in out.md") implies writing a
//     file: adds "write";
//   - web: words of web pages and online shopping ("website", "online",
//     "prices", "buy", "links") or a URL imply a browser or fetch tool: adds
//     "web", "browser", "page", "url".

var (
	timeWords = wordSet(`today todays tomorrow tomorrows yesterday yesterdays tonight
		monday tuesday wednesday thursday friday saturday sunday weekend weekday`)
	timeRelative = wordSet(`next last this coming past previous upcoming`)
	timeUnits    = wordSet(`day days week weeks month months year years hour hours quarter
		monday tuesday wednesday thursday friday saturday sunday weekend`)
	writeVerbs = wordSet(`save saved saves saving write writes writing written wrote store stored
		export exported output create created generate generated make made draft drafted
		put record compose produce`)
	webWords = wordSet(`web website websites webpage webpages site sites online internet browse
		browser shop shopping buy buying purchase price prices pricing product products
		link links url urls`)
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// impliedTerms returns the capability terms implied by a request (or one of
// its clauses).
func (ix *Index) impliedTerms(q string) []expansion {
	cfg := &ix.cfg
	if cfg.ImpliedTime <= 0 && cfg.ImpliedWrite <= 0 && cfg.ImpliedWeb <= 0 {
		return nil
	}
	var time, write, path, web bool
	prev := ""
	for _, f := range strings.Fields(q) {
		raw := strings.Trim(f, "`'\"()[]<>,;:.!?")
		lf := strings.ToLower(raw)
		if strings.HasPrefix(lf, "http://") || strings.HasPrefix(lf, "https://") || strings.HasPrefix(lf, "www.") {
			web = true
			prev = ""
			continue
		}
		if looksLikePath(raw) || (strings.HasPrefix(raw, "/") && strings.Count(raw, "/") >= 2) {
			path = true
			prev = ""
			continue
		}
		w := strings.TrimSuffix(strings.TrimSuffix(lf, "'s"), "’s")
		switch {
		case timeWords[w]:
			time = true
		case timeRelative[prev] && timeUnits[w]:
			time = true
		case isHours(w):
			time = true
		}
		if writeVerbs[w] {
			write = true
		}
		if webWords[w] {
			web = true
		}
		prev = w
	}
	var out []expansion
	add := func(weight float64, words ...string) {
		for _, w := range words {
			if t := normalizeWord(w, cfg.Stem); t != "" {
				out = append(out, expansion{t, weight})
			}
		}
	}
	if time && cfg.ImpliedTime > 0 {
		add(cfg.ImpliedTime, "time", "date", "current")
	}
	if write && path && cfg.ImpliedWrite > 0 {
		add(cfg.ImpliedWrite, "write")
	}
	if web && cfg.ImpliedWeb > 0 {
		add(cfg.ImpliedWeb, "web", "browser", "page", "url")
	}
	return out
}

// isHours recognises "24h", "48h", "12hrs".
func isHours(w string) bool {
	i := 0
	for i < len(w) && w[i] >= '0' && w[i] <= '9' {
		i++
	}
	if i == 0 || i == len(w) {
		return false
	}
	switch w[i:] {
	case "h", "hr", "hrs":
		return true
	}
	return false
}
