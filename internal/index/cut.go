package index

// CutOptions bound the adaptive number of hits a search returns (Cut).
type CutOptions struct {
	Min, Max int // always at least Min hits (when there are), at most Max
	// Ratio: a hit is kept while its score is at least Ratio times the
	// best hit's, so a clear winner gives few hits and flat scores many.
	Ratio float64
	// Budget: the hits' tokens together stay within it (0 = unbounded),
	// Cost(i) being hit i's tokens as the caller renders it. The first hit
	// is always kept.
	Budget int
	Cost   func(i int) int
}

// DefaultCut is the adaptive cut discover and search use (measured in
// bench/contextcost: recall at equal tokens).
var DefaultCut = CutOptions{Min: 3, Max: 15, Ratio: 0.5, Budget: 3000}

// Cut returns how many of scores (best first) to return: the hits scoring
// at least Ratio times the best, but at least Min and at most Max, then as
// many of those as fit in Budget.
func Cut(scores []float64, o CutOptions) int {
	n := len(scores)
	if n == 0 {
		return 0
	}
	if o.Max > 0 {
		n = min(n, o.Max)
	}
	keep := n
	if top := scores[0]; top > 0 && o.Ratio > 0 {
		keep = 1
		for keep < n && scores[keep] >= o.Ratio*top {
			keep++
		}
	}
	keep = min(max(keep, o.Min), n)
	if o.Budget > 0 && o.Cost != nil {
		used := 0
		for i := range keep {
			used += o.Cost(i)
			if used > o.Budget && i > 0 {
				return i
			}
		}
	}
	return keep
}
