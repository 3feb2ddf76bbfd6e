package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// counting counts Tools calls; fresh is what it answers to Fresh.
type counting struct {
	id    string
	lists atomic.Int32
	fresh atomic.Bool
	tools []catalog.Tool
}

func (c *counting) Info() catalog.ProviderInfo { return catalog.ProviderInfo{ID: c.id} }
func (c *counting) Tools(context.Context) ([]catalog.Tool, error) {
	c.lists.Add(1)
	return c.tools, nil
}
func (c *counting) Call(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
	return &provider.Result{}, nil
}
func (c *counting) Fresh() bool { return c.fresh.Load() }

// notFresher has no Fresh method: it is re-listed on every Refresh.
type notFresher struct{ *counting }

func (n notFresher) Fresh() {} // a different signature: not a provider.Fresher

func TestRefreshSkipsFreshProviders(t *testing.T) {
	tests := []struct {
		name      string
		fresh     bool
		other     bool // a second provider without Fresher
		rescan    bool
		wantLists int32 // Tools calls of the first provider in the second Refresh
	}{
		{"fresh: not re-listed", true, false, false, 0},
		{"stale: re-listed", false, false, false, 1},
		{"fresh but rescan asked", true, false, true, 1},
		{"fresh, another provider is not a Fresher: only that one is re-listed", true, true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(nil)
			c := &counting{id: "a", tools: []catalog.Tool{{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
			if err := r.Add(c); err != nil {
				t.Fatal(err)
			}
			if tt.other {
				if err := r.Add(notFresher{&counting{id: "b"}}); err != nil {
					t.Fatal(err)
				}
			}
			c.fresh.Store(true) // fresh before the first listing must not skip it
			r.Refresh(context.Background())
			if c.lists.Load() != 1 {
				t.Fatalf("first Refresh listed %d times, want 1", c.lists.Load())
			}
			if _, ok := r.Lookup("a_one"); !ok {
				t.Fatalf("tool not installed; names %v", r.Names())
			}
			c.fresh.Store(tt.fresh)
			ctx := context.Background()
			if tt.rescan {
				ctx = provider.WithRescan(ctx)
			}
			r.Refresh(ctx)
			if got := c.lists.Load() - 1; got != tt.wantLists {
				t.Errorf("second Refresh listed %d times, want %d", got, tt.wantLists)
			}
		})
	}
}

// TestRefreshListsOnlyStaleProviders: a provider that says it is fresh is
// not listed again because another one is stale (a public Provider whose
// interval ran out must not re-list one that reports its own changes); a
// rescan lists every one.
func TestRefreshListsOnlyStaleProviders(t *testing.T) {
	r := New(nil)
	a := &counting{id: "a", tools: []catalog.Tool{{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	b := &counting{id: "b", tools: []catalog.Tool{{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	for _, c := range []*counting{a, b} {
		if err := r.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	r.Refresh(ctx)
	lists := func() [2]int32 { return [2]int32{a.lists.Load(), b.lists.Load()} }
	for _, step := range []struct {
		name           string
		aFresh, bFresh bool
		rescan         bool
		want           [2]int32 // lists of a and b after the step
	}{
		{"b stale", true, false, false, [2]int32{1, 2}},
		{"a stale", false, true, false, [2]int32{2, 2}},
		{"both fresh", true, true, false, [2]int32{2, 2}},
		{"both stale", false, false, false, [2]int32{3, 3}},
		{"both fresh, rescan", true, true, true, [2]int32{4, 4}},
	} {
		a.fresh.Store(step.aFresh)
		b.fresh.Store(step.bFresh)
		c := ctx
		if step.rescan {
			c = provider.WithRescan(ctx)
		}
		r.Refresh(c)
		if got := lists(); got != step.want {
			t.Fatalf("%s: lists of a and b = %v, want %v", step.name, got, step.want)
		}
	}
	if _, ok := r.Lookup("b_two"); !ok {
		t.Errorf("b's tool is missing; names %v", r.Names())
	}
}

// Re-enabling a provider re-lists it even though it says it is fresh.
func TestRefreshAfterReenable(t *testing.T) {
	r := New(nil)
	c := &counting{id: "a", tools: []catalog.Tool{{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	c.fresh.Store(true)
	if err := r.Add(c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.Refresh(ctx)
	if err := r.SetEnabled(ctx, "a", false); err != nil {
		t.Fatal(err)
	}
	if err := r.SetEnabled(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("a_one"); !ok {
		t.Errorf("re-enabled provider's tool is missing; names %v", r.Names())
	}
}

// The rescan mark overrides the per-request Refreshed mark.
func TestRescanOverridesRefreshed(t *testing.T) {
	r := New(nil)
	c := &counting{id: "a"}
	if err := r.Add(c); err != nil {
		t.Fatal(err)
	}
	ctx := r.Refreshed(context.Background())
	r.Refresh(ctx)
	if c.lists.Load() != 0 {
		t.Fatal("a refreshed request re-listed")
	}
	r.Refresh(provider.WithRescan(ctx))
	if c.lists.Load() != 1 {
		t.Errorf("rescan listed %d times, want 1", c.lists.Load())
	}
}

func BenchmarkRefreshFresh(b *testing.B) {
	r := New(nil)
	for _, id := range []string{"a", "b", "c"} {
		c := &counting{id: id}
		c.fresh.Store(true)
		if err := r.Add(c); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	r.Refresh(ctx)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Refresh(ctx)
		}
	})
}

// starting answers Tools with an error that only means "not started yet".
type starting struct{ counting }

func (s *starting) Tools(context.Context) ([]catalog.Tool, error) {
	return nil, fmt.Errorf("upstream %q: %w", s.id, provider.ErrStarting)
}

// TestDiagnosticsTellStartingFromFailed: a slow upstream is reported as
// starting, not failed (doctor fails only on failed).
func TestDiagnosticsTellStartingFromFailed(t *testing.T) {
	r := New(nil)
	if err := r.Add(&starting{counting{id: "slow"}}); err != nil {
		t.Fatal(err)
	}
	r.Refresh(context.Background())
	var got []string
	for _, d := range r.Diagnostics() {
		if d.Provider == "slow" && d.Item == "" {
			got = append(got, d.Status)
		}
	}
	if len(got) != 1 || got[0] != "starting" {
		t.Fatalf("diagnostics of a starting provider: %v", got)
	}
}
