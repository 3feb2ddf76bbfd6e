package jsrun

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPlain: the cost of a trivial script in process and isolated.
func BenchmarkPlain(b *testing.B) {
	for _, bc := range []struct {
		name string
		r    Runner
	}{{"in-process", InProcess}, {"isolated", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			r := bc.r
			if r == nil {
				if ok, why := Isolation(); !ok {
					b.Skip(why)
				}
				p := NewPool(2)
				b.Cleanup(p.Close)
				r = p
			}
			sc := Script{Code: "1 + 1", Limits: Limits{Timeout: 5 * time.Second}}
			for range b.N {
				if out, err := r.Run(context.Background(), sc, nil); err != nil || string(out.Result) != "2" {
					b.Fatal(out, err)
				}
			}
		})
	}
}
