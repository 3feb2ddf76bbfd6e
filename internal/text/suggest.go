package text

import "strings"

// Suggest returns the candidate closest to s (case-insensitive edit
// distance at most 2, and less than half of s), or "": the "did you mean"
// of a misspelt key or name. On a tie the earlier candidate wins.
func Suggest(s string, candidates []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, c := range candidates {
		dist := Distance(ls, strings.ToLower(c), 2)
		if dist < bestD && dist*2 <= len(s) {
			best, bestD = c, dist
		}
	}
	return best
}
