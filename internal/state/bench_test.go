package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/redistest"
)

// BenchmarkStores measures what one call's shared-state work costs — the
// loop guard's read (Count, every call; the reset only follows a failure)
// and, for a mutating call in token mode, a single-use mark (Once) — in
// memory and in a real local Redis, interleaved in one run; it reports both
// and their ratio.
//
//	go test -run '^$' -bench Stores -benchtime 2000x ./internal/state/
func BenchmarkStores(b *testing.B) {
	srv := redistest.Start(b)
	r, err := NewRedis(srv.URL, "bench:")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	mem := NewMemory()
	ctx := context.Background()
	perCall := func(s Store, i int) {
		k := fmt.Sprint("lg:", i%64)
		if _, err := s.Count(ctx, k); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Once(ctx, fmt.Sprint("ct:", i), time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	var memT, redisT time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		perCall(mem, i)
		t1 := time.Now()
		perCall(r, i)
		memT += t1.Sub(t0)
		redisT += time.Since(t1)
	}
	b.ReportMetric(float64(memT.Microseconds())/float64(b.N), "memory-µs/call")
	b.ReportMetric(float64(redisT.Microseconds())/float64(b.N), "redis-µs/call")
	b.ReportMetric(float64(redisT)/float64(max(memT, 1)), "redis/memory")
}
