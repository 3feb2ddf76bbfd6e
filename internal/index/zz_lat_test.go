package index

import (
	"fmt"
	"testing"
	"time"
)

func TestLatTypes(t *testing.T) {
	order, by := synthCatalog(10_000)
	ix := buildSynth(order, by)
	qs := synthQueries(300)
	var sum [3]time.Duration
	var mx [3]time.Duration
	for i, q := range qs {
		t0 := time.Now()
		ix.Search(q, Options{Limit: 10})
		d := time.Since(t0)
		sum[i%3] += d
		mx[i%3] = max(mx[i%3], d)
	}
	fmt.Println(sum[0]/100, sum[1]/100, sum[2]/100, mx)
	fmt.Println(qs[2])
	fmt.Println(len(ix.lex.expand(ix.analyzer()(nil, qs[2]), 0.9, 0.4, 0.5, true)))
}
