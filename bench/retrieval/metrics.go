package main

// Metric definitions follow shared/datasets/README.md:
//   - recall@k: per query, the share of its needs found in the top k; averaged over queries.
//   - complete@k: share of queries whose every need is in the top k.
//   - MRR: mean of 1 / rank of the first relevant tool (0 when none in the top 50).
// A need is a list of acceptable ids; it is found when any of them is retrieved.

// mrrDepth is the rank beyond which a query's reciprocal rank counts as 0.
const mrrDepth = 50

// queryResult is one query's needs and the ranked ids retrieved for it.
type queryResult struct {
	Needs  [][]string
	Ranked []string
}

// foundAt returns, for each need, the 1-based rank of its best retrieved id
// (0 when not retrieved).
func foundAt(r queryResult) []int {
	pos := make(map[string]int, len(r.Ranked))
	for i, id := range r.Ranked {
		if _, ok := pos[id]; !ok {
			pos[id] = i + 1
		}
	}
	out := make([]int, len(r.Needs))
	for i, need := range r.Needs {
		for _, id := range need {
			if p, ok := pos[id]; ok && (out[i] == 0 || p < out[i]) {
				out[i] = p
			}
		}
	}
	return out
}

func recallAt(rs []queryResult, k int) float64 {
	if len(rs) == 0 {
		return 0
	}
	var sum float64
	for _, r := range rs {
		if len(r.Needs) == 0 {
			continue
		}
		n := 0
		for _, p := range foundAt(r) {
			if p > 0 && p <= k {
				n++
			}
		}
		sum += float64(n) / float64(len(r.Needs))
	}
	return sum / float64(len(rs))
}

func completeAt(rs []queryResult, k int) float64 {
	if len(rs) == 0 {
		return 0
	}
	n := 0
	for _, r := range rs {
		all := len(r.Needs) > 0
		for _, p := range foundAt(r) {
			if p == 0 || p > k {
				all = false
				break
			}
		}
		if all {
			n++
		}
	}
	return float64(n) / float64(len(rs))
}

func mrr(rs []queryResult) float64 {
	if len(rs) == 0 {
		return 0
	}
	var sum float64
	for _, r := range rs {
		first := 0
		for _, p := range foundAt(r) {
			if p > 0 && (first == 0 || p < first) {
				first = p
			}
		}
		if first > 0 && first <= mrrDepth {
			sum += 1 / float64(first)
		}
	}
	return sum / float64(len(rs))
}
