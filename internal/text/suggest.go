package text

import (
	"sort"
	"strings"
)

// Suggest returns the candidate nearest to s for a "did you mean": the
// first of those at the smallest edit distance (Distance, case ignored),
// at most 2 and at most half the length of s, so that a short word is not
// matched to anything; "" when none is that close.
func Suggest(s string, candidates []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, c := range candidates {
		d := Distance(ls, strings.ToLower(c), 2)
		if d < bestD && d*2 <= len(s) {
			best, bestD = c, d
		}
	}
	return best
}

// Suggestions returns up to n candidates close to name, nearest first (then
// by name): within an edit distance (case ignored) of a third of name's
// length, at least 2, or, from three letters on, containing name or
// contained in it. Never nil.
func Suggestions(name string, candidates []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	low := strings.ToLower(name)
	limit := max(2, len(low)/3)
	var out []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(low, lc, limit)
		if d > limit && len(low) >= 3 && (strings.Contains(lc, low) || strings.Contains(low, lc)) {
			d = limit
		}
		if d <= limit {
			out = append(out, scored{c, d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].d != out[j].d {
			return out[i].d < out[j].d
		}
		return out[i].s < out[j].s
	})
	names := []string{}
	for i := 0; i < len(out) && i < n; i++ {
		names = append(names, out[i].s)
	}
	return names
}

// FirstLine returns the first line of s that is not blank, without its
// surrounding white space; a line ends at "\n" or "\r".
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n\r"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}
