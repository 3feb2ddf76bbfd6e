package registry_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// generation returns n tools all matching the query "widget", named after gen.
func generationTools(gen string, n int) []catalog.Tool {
	out := make([]catalog.Tool, n)
	for i := range out {
		out[i] = providertest.Tool(fmt.Sprintf("%s_%03d", gen, i), "manage the widget "+gen,
			`{"type":"object","properties":{"id":{"type":"string","description":"the widget id"}}}`, true)
	}
	return out
}

// The index is built in the background (indexer.go): a search racing
// refreshes and switches must see, per provider, one whole tool list (never
// a mix of two, never a part of one), and a search begun after a change
// returned must see that change. Run with -race.
func TestSearchRacesBackgroundIndex(t *testing.T) {
	const n = 40
	a := providertest.New(catalog.ProviderInfo{ID: "a"}, generationTools("old", n)...)
	b := providertest.New(catalog.ProviderInfo{ID: "b"}, providertest.Tool("other", "manage the widget elsewhere", "", true))
	r := registry.New(nil)
	if err := r.Add(a); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(b); err != nil {
		t.Fatal(err)
	}
	ctx := provider.WithRescan(context.Background())
	r.Refresh(ctx)

	// check fails unless provider a's hits are all of one generation and
	// complete (n of them), or none when a is switched off.
	check := func(hits []index.Hit, mayBeOff bool) error {
		gens := map[string]int{}
		for _, h := range hits {
			if h.Provider == "a" {
				gens[strings.SplitN(strings.TrimPrefix(h.ID, "a_"), "_", 2)[0]]++
			}
		}
		switch {
		case len(gens) == 0 && mayBeOff:
			return nil
		case len(gens) != 1:
			return fmt.Errorf("hits of provider a from %d tool lists: %v", len(gens), gens)
		}
		for g, c := range gens {
			if c != n {
				return fmt.Errorf("%d of %d tools of list %q", c, n, g)
			}
		}
		return nil
	}
	opts := index.Options{Limit: 2 * n}

	stop := make(chan struct{})
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := check(r.Search("widget", opts), true); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	for i := range 30 {
		gen := fmt.Sprintf("g%d", i)
		a.SetTools(generationTools(gen, n)...)
		r.Refresh(ctx)
		// Begun after the refresh returned: the new list, whole.
		hits := r.Search("widget", opts)
		if err := check(hits, false); err != nil {
			t.Fatalf("after refresh %d: %v", i, err)
		}
		if !strings.HasPrefix(hits[0].ID, "a_"+gen+"_") && !strings.HasPrefix(hits[len(hits)-1].ID, "a_"+gen+"_") {
			t.Fatalf("after refresh %d: hits %s… are not of the new list", i, hits[0].ID)
		}
		if i%5 == 4 { // a switch racing the searches (what a reload or the console does)
			if err := r.SetEnabled(ctx, "a", false); err != nil {
				t.Fatal(err)
			}
			for _, h := range r.Search("widget", opts) {
				if h.Provider == "a" {
					t.Fatalf("switched-off provider still found: %s", h.ID)
				}
			}
			if err := r.SetEnabled(ctx, "a", true); err != nil {
				t.Fatal(err)
			}
			if err := check(r.Search("widget", opts), false); err != nil {
				t.Fatalf("after switching back on: %v", err)
			}
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal("a search racing the index build:", err)
	default:
	}
}

// Registries built and refreshed concurrently (a reload builds the next
// generation while the live one serves) each search their own catalog.
func TestSearchWhileAnotherRegistryBuilds(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gen := fmt.Sprintf("r%d", i)
			r := registry.New(nil)
			if err := r.Add(providertest.New(catalog.ProviderInfo{ID: "a"}, generationTools(gen, 30)...)); err != nil {
				t.Error(err)
				return
			}
			r.Refresh(context.Background())
			hits := r.Search("widget", index.Options{Limit: 100})
			if len(hits) != 30 || !strings.HasPrefix(hits[0].ID, "a_"+gen) {
				t.Errorf("registry %d: %d hits, first %v", i, len(hits), hits)
			}
		}()
	}
	wg.Wait()
}
