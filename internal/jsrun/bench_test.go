package jsrun

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPlain: the cost of a trivial script in process and isolated
// (from a warm pool).
func BenchmarkPlain(b *testing.B) {
	for _, bc := range []struct {
		name string
		r    Runner
	}{{"in-process", InProcess}, {"isolated", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			r := bc.r
			var pool *Pool
			if r == nil {
				if ok, why := Isolation(); !ok {
					b.Skip(why)
				}
				pool = NewPool(2)
				b.Cleanup(pool.Close)
				r = pool
			}
			sc := Script{Code: "1 + 1", Limits: Limits{Timeout: 5 * time.Second}}
			for range b.N {
				if pool != nil { // off the clock: the pool is warm, as a server's is between scripts
					b.StopTimer()
					if err := pool.Warm(context.Background()); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if out, err := r.Run(context.Background(), sc, nil); err != nil || string(out.Result) != "2" {
					b.Fatal(out, err)
				}
			}
		})
	}
}
