package skills

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// freshFake is a provider that says it is fresh when told to, and counts
// its listings.
type freshFake struct {
	*providertest.Fake
	fresh atomic.Bool
	lists atomic.Int32
}

func (f *freshFake) Fresh() bool { return f.fresh.Load() }
func (f *freshFake) Tools(ctx context.Context) ([]catalog.Tool, error) {
	f.lists.Add(1)
	return f.Fake.Tools(ctx)
}

func skillSource(desc, out string) []byte {
	return []byte("const meta = {description: '" + desc + "'}; function run() { return '" + out + "' }")
}

// A provider with skills is fresh between listings (no re-listing on the
// call path), and an edited skill is still picked up: at once when run,
// and in the catalog once the interval has passed.
func TestWrappedFresh(t *testing.T) {
	t.Cleanup(func() { now = time.Now })
	base := time.Now()
	now = func() time.Time { return base }
	dir := t.TempDir()
	file := filepath.Join(dir, "fix.js")
	if err := os.WriteFile(file, skillSource("first version", "one"), 0o644); err != nil {
		t.Fatal(err)
	}
	inner := &freshFake{Fake: providertest.New(info, providertest.Tool("list_issues", "List issues", "", true))}
	inner.fresh.Store(true)
	w := Wrap(inner, dir, Options{Logger: slog.New(slog.DiscardHandler)}).(*Wrapped)
	if w.Fresh() {
		t.Fatal("fresh before its skills were ever listed")
	}
	reg := registry.New(nil)
	if err := reg.Add(w); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reg.Refresh(ctx)
	if !w.Fresh() {
		t.Fatal("not fresh right after a listing")
	}
	lists := inner.lists.Load()
	reg.Refresh(ctx)
	if inner.lists.Load() != lists {
		t.Fatal("a fresh provider with skills was re-listed")
	}
	inner.fresh.Store(false)
	if w.Fresh() {
		t.Fatal("fresh while the wrapped provider is not")
	}
	inner.fresh.Store(true)

	// Edit the skill: a run uses the new file at once...
	if err := os.WriteFile(file, skillSource("second version", "two"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.RunSkill(ctx, "fix", json.RawMessage(`{}`), &fakeCaller{})
	if err != nil || res.Text != "two" {
		t.Fatalf("run after the edit = %+v, %v", res, err)
	}
	// ...and the catalog has it once the interval passed.
	now = func() time.Time { return base.Add(RescanEvery) }
	if w.Fresh() {
		t.Fatal("still fresh after RescanEvery")
	}
	reg.Refresh(ctx)
	if s, ok := reg.Skill("gh", "fix"); !ok || s.Description != "second version" {
		t.Fatalf("skill after the interval = %+v, %v", s, ok)
	}
	if !w.Fresh() {
		t.Fatal("not fresh after the new listing")
	}
}
