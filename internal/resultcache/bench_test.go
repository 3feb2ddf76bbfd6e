package resultcache_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/resultcache"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// BenchmarkCacheHit runs the same call through the whole pipeline (audit to
// nowhere, resolve, gate, validation, policy, the cache stage, execute)
// against an in-memory echo provider: "miss" with every call's arguments
// new (the stage looks up, calls the backend and keeps the result), "hit"
// with the same arguments each time. It reports each one's p50 and logs
// the ratio hit/miss.
func BenchmarkCacheHit(b *testing.B) {
	schema := `{"type":"object","properties":{"city":{"type":"string"},"n":{"type":"integer"}}}`
	echo := providertest.New(catalog.ProviderInfo{ID: "weather"}, providertest.Tool("forecast", "The forecast", schema, true))
	echo.Func = func(_ context.Context, _ catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: string(args)}, nil
	}
	reg := registry.New(nil)
	if err := reg.Add(echo); err != nil {
		b.Fatal(err)
	}
	reg.Refresh(context.Background())
	c := resultcache.New(resultcache.Options{Rules: []resultcache.Rule{{Tools: []string{"weather_*"}, TTL: time.Hour, PerIdentity: true}}})
	run := pipeline.New(pipeline.Options{Catalog: reg, ResultCache: c.Stage(), Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	call := func(args string) *pipeline.Response {
		return run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: "alice", Session: "s"}, Tool: "weather_forecast", Args: json.RawMessage(args)})
	}
	p50 := map[string]float64{}
	for _, mode := range []string{"miss", "hit"} {
		b.Run(mode, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			hot := `{"city":"Oslo","n":-1}`
			call(hot)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				args := hot
				if mode == "miss" {
					args = `{"city":"Oslo","n":` + strconv.Itoa(i) + `}`
				}
				start := time.Now()
				resp := call(args)
				lat = append(lat, time.Since(start))
				if resp.Cache != mode {
					b.Fatalf("cache = %q, want %q", resp.Cache, mode)
				}
			}
			slices.Sort(lat)
			p := float64(lat[len(lat)/2].Nanoseconds())
			p50[mode] = p
			b.ReportMetric(p, "p50-ns")
		})
	}
	if p50["miss"] > 0 && p50["hit"] > 0 {
		b.Logf("hit p50 / miss p50 = %.2f (hit %.0f ns, miss %.0f ns; in-memory echo backend)", p50["hit"]/p50["miss"], p50["hit"], p50["miss"])
	}
}
