package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

func load(t *testing.T, o registry.Options, ps ...*providertest.Fake) *registry.Registry {
	t.Helper()
	r := registry.NewWith(nil, o)
	for _, p := range ps {
		if err := r.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	r.Refresh(context.Background())
	return r
}

// Which of two colliding tools keeps the name depends on their names, never
// on the order the upstream listed them; a rename resolves the collision.
func TestCollisionIsOrderIndependentAndRenameResolvesIt(t *testing.T) {
	orders := [][]string{{"get.user", "get_user"}, {"get_user", "get.user"}}
	for _, order := range orders {
		var tools []catalog.Tool
		for _, n := range order {
			tools = append(tools, providertest.Tool(n, "user "+n, "", true))
		}
		r := load(t, registry.Options{}, providertest.New(catalog.ProviderInfo{ID: "gh"}, tools...))
		got, ok := r.Lookup("gh_get_user")
		if !ok || got.Name != "get.user" { // "." sorts before "_"
			t.Fatalf("order %v: gh_get_user = %+v %v, want get.user", order, got, ok)
		}
		c := r.Conflicts()
		if len(c) != 1 || c[0].Tool.Name != "get_user" || !strings.Contains(c[0].Reason(), `rename: {"get_user": <new name>}`) {
			t.Fatalf("order %v: conflicts = %+v", order, c)
		}
		if len(r.Tools("gh")) != 1 {
			t.Fatalf("a tool without a name must not be listed as callable")
		}
	}
	r := load(t, registry.Options{Rename: map[string]map[string]string{"gh": {"get_user": "get_user_v2", "gone": "x"}}},
		providertest.New(catalog.ProviderInfo{ID: "gh"}, providertest.Tool("get.user", "", "", true), providertest.Tool("get_user", "", "", true)))
	if len(r.Conflicts()) != 0 {
		t.Fatalf("rename left conflicts: %+v", r.Conflicts())
	}
	if got, ok := r.Lookup("gh_get_user_v2"); !ok || got.Name != "get_user" {
		t.Fatalf("renamed tool = %+v %v (its own name must stay the remote identity)", got, ok)
	}
	if got, ok := r.Find("gh", "get_user_v2"); !ok || got.Name != "get_user" {
		t.Fatalf("Find by the new name = %+v %v", got, ok)
	}
	warned := false
	for _, d := range r.Diagnostics() {
		warned = warned || (d.Item == "gone" && d.Status == "warning")
	}
	if !warned {
		t.Fatal("a rename of a tool that does not exist must be a warning")
	}
}

// A passthrough (prefix: "") upstream keeps its names exactly.
func TestPassthroughNamesAreVerbatim(t *testing.T) {
	pt := providertest.New(catalog.ProviderInfo{ID: "up", Kind: "mcp", HostLocal: true},
		providertest.Tool("files.read", "", "", true), providertest.Tool("Zed zone", "", "", true))
	for _, s := range []naming.Scheme{naming.Readable, naming.Lossless} {
		r := load(t, registry.Options{Scheme: s}, pt)
		if got := strings.Join(r.Names(), ","); got != "Zed zone,files.read" {
			t.Errorf("%s: names = %q, want the upstream's own", s, got)
		}
	}
}

// A rule written for the wrong scheme never silently stops protecting.
func TestUnmatchedPolicyRules(t *testing.T) {
	fs := providertest.New(catalog.ProviderInfo{ID: "fs"},
		providertest.Tool("write_file", "", "", false), providertest.Tool("deleteFile", "", "", false))
	deny := []string{"fs_delete*", "fs_deletez46zile", "fs_write_*", "nothing_*"}
	r := load(t, registry.Options{Deny: deny}, fs)
	var got []string
	for _, w := range r.UnmatchedRules(deny, nil) {
		got = append(got, w.String())
	}
	want := []string{
		`policy.deny rule "fs_deletez46zile" matches no loaded tool, so it protects nothing; it would match "fs_deletez46zile" (naming: lossless): rules use the canonical names of the scheme in force`,
		`policy.deny rule "nothing_*" matches no loaded tool, so it protects nothing`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	n := 0
	for _, d := range r.RuleDiagnostics(deny, nil) {
		if d.Provider == "policy" && d.Status == "warning" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("doctor lines for rules = %d, want 2", n)
	}
}

func TestFlatNameDiagnostics(t *testing.T) {
	long := strings.Repeat("a", 70)
	mid := strings.Repeat("b", 50) // fine for the APIs, too long once Claude Code prefixes it
	hub := func() *providertest.Fake {
		return providertest.New(catalog.ProviderInfo{ID: "hub"}, providertest.Tool(long, "", "", true),
			providertest.Tool(mid, "", "", true), providertest.Tool("short", "", "", true))
	}
	r := load(t, registry.Options{}, hub())
	var lines []string
	for _, d := range r.FlatNameDiagnostics(true) {
		if d.Status == "warning" {
			lines = append(lines, d.Item+": "+d.Reason)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "flat mode does not publish it (74 characters, over flat.maxNameLength 64)") ||
		!strings.Contains(lines[1], "Claude Code names it mcp__agent-tools__… (72 characters)") || !strings.Contains(lines[0], "rename:") {
		t.Fatalf("flat diagnostics:\n%s", strings.Join(lines, "\n"))
	}
	if len(r.Tools("hub")) != 3 {
		t.Fatal("long names must stay in the registry")
	}
	r = load(t, registry.Options{FlatMaxNameLength: 128}, hub())
	if r.FlatMaxNameLength() != 128 {
		t.Fatal("flat.maxNameLength not kept")
	}
	for _, d := range r.FlatNameDiagnostics(false) {
		if d.Status == "warning" {
			t.Fatalf("outside flat mode long names are only counted: %+v", d)
		}
	}
}
