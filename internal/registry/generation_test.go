package registry_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// A refresh swaps a provider's tools whole: a tool that exists before and
// after a change of its neighbours is found by every lookup made while the
// change is installed (no UNKNOWN_TOOL for a tool that never went away).
func TestRefreshNeverLosesAStableTool(t *testing.T) {
	const schema = `{"type":"object"}`
	fake := providertest.New(catalog.ProviderInfo{ID: "up"}, providertest.Tool("stable", "Always here", schema, true))
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	var missed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok := reg.Lookup("up_stable"); !ok {
					missed.Add(1)
				}
				if _, ok := reg.Find("up", "stable"); !ok {
					missed.Add(1)
				}
			}
		}()
	}
	for i := range 300 {
		tools := []catalog.Tool{providertest.Tool("stable", "Always here", schema, true)}
		if i%2 == 0 {
			tools = append(tools, providertest.Tool("extra", "Comes and goes", schema, true))
		}
		fake.SetTools(tools...)
		reg.Refresh(provider.WithRescan(context.Background()))
	}
	close(stop)
	wg.Wait()
	if n := missed.Load(); n != 0 {
		t.Fatalf("%d lookups missed a tool that was there all along", n)
	}
}
