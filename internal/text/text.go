// Package text holds the small text helpers several packages need: a
// bounded edit distance and the "did you mean" suggestions built on it, a
// rune-safe clip for quoting untrusted text in messages, and the first line
// of a text. One copy each, so a fix (or a UTF-8 bug) lands everywhere at
// once.
package text

import "unicode/utf8"

// Ellipsis marks text that Clip shortened.
const Ellipsis = "…"

// Clip returns s shortened to at most n runes, with Ellipsis appended when
// something was cut. It never splits a UTF-8 sequence; invalid bytes count as
// one rune each and are kept as they are. n <= 0 yields "" (plus Ellipsis
// when s is not empty).
func Clip(s string, n int) string {
	if len(s) <= n { // at most n bytes: at most n runes
		return s
	}
	if n < 0 {
		n = 0
	}
	runes := 0
	for i := range s {
		if runes == n {
			return s[:i] + Ellipsis
		}
		runes++
	}
	return s
}

// Distance is the optimal-string-alignment distance between a and b, in
// runes: insertions, deletions, substitutions and transpositions of two
// adjacent runes each cost one. It only computes a band of width limit
// around the diagonal, so its cost is bounded by len(a)·(2·limit+1): any
// distance over limit is reported as limit+1. A negative limit is 0.
func Distance(a, b string, limit int) int {
	limit = max(limit, 0)
	ra, rb := runes(a), runes(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	over := limit + 1
	// Three rows of the (len(ra)+1)×(len(rb)+1) matrix; cells outside the
	// band hold over, which is never below the true value there.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = min(j, over)
	}
	for i := 1; i <= len(ra); i++ {
		lo, hi := max(1, i-limit), min(len(rb), i+limit)
		for j := range cur {
			cur[j] = over
		}
		if i <= limit {
			cur[0] = i
		}
		rowMin := cur[0]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = min(v, over)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= over {
			return over
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// runes decodes s; each invalid byte is one rune (utf8.RuneError), as a
// range loop sees it.
func runes(s string) []rune {
	out := make([]rune, 0, utf8.RuneCountInString(s))
	for _, r := range s {
		out = append(out, r)
	}
	return out
}
