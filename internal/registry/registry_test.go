package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

func TestCanonicalNamesAndCollisions(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		scheme    naming.Scheme
		names     string
		listRepos string
	}{
		{naming.Readable, "deploy,gh-cli_list_repos,gh-cli_" + long + ",runtime_status", "gh-cli_list_repos"},
		{naming.Lossless, "deploy,ghz2dzcli_listz2ezrepos,ghz2dzcli_" + long + ",runtime_status", "ghz2dzcli_listz2ezrepos"},
	}
	for _, tt := range tests {
		t.Run(string(tt.scheme), func(t *testing.T) {
			builtin := providertest.New(catalog.ProviderInfo{ID: "builtin", HostLocal: true},
				providertest.Tool("runtime_status", "status", "", true))
			local := providertest.New(catalog.ProviderInfo{ID: "local", HostLocal: true},
				providertest.Tool("runtime_status", "a script shadowing a built-in", "", true),
				providertest.Tool("deploy", "Deploy", "", false))
			gh := providertest.New(catalog.ProviderInfo{ID: "gh-cli"},
				providertest.Tool("list.repos", "List repositories", "", true),
				providertest.Tool("", "empty name", "", true),
				providertest.Tool(long, "long, but kept: only flat mode limits length", "", true))
			r := registry.NewWith(nil, registry.Options{Scheme: tt.scheme})
			for _, p := range []*providertest.Fake{builtin, local, gh} {
				if err := r.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Add(providertest.New(catalog.ProviderInfo{ID: "gh-cli"})); err == nil {
				t.Fatal("duplicate provider id accepted")
			}
			if !r.Refresh(context.Background()) {
				t.Fatal("first refresh reported no change")
			}
			if got := strings.Join(r.Names(), ","); got != tt.names {
				t.Fatalf("names = %s, want %s", got, tt.names)
			}
			if tl, _ := r.Lookup("runtime_status"); tl.Provider != "builtin" {
				t.Fatalf("the built-in must keep its name, got provider %q", tl.Provider)
			}
			for _, n := range []string{"list.repos", tt.listRepos} {
				if tl, ok := r.Find("gh-cli", n); !ok || tl.Canonical != tt.listRepos {
					t.Fatalf("Find(%q) = %+v %v", n, tl, ok)
				}
			}
			var skipped, failed []string
			for _, d := range r.Diagnostics() {
				switch d.Status {
				case "skipped":
					skipped = append(skipped, d.Provider+":"+d.Reason)
				case "failed":
					failed = append(failed, d.Provider+":"+d.Item)
				}
			}
			if len(skipped) != 1 || !strings.Contains(skipped[0], "empty tool name") {
				t.Fatalf("want only the empty name rejected, got %q", skipped)
			}
			if strings.Join(failed, ",") != "local:runtime_status" {
				t.Fatalf("want the shadowing script reported as a collision, got %q", failed)
			}
			if c := r.Conflicts(); len(c) != 1 || c[0].Tool.Provider != "local" || c[0].Owner.Provider != "builtin" {
				t.Fatalf("conflicts = %+v", c)
			}
			if r.Refresh(context.Background()) {
				t.Fatal("a refresh without changes reported a change")
			}
		})
	}
}

func TestRefreshIsIncrementalAndSetEnabled(t *testing.T) {
	a := providertest.New(catalog.ProviderInfo{ID: "a"}, providertest.Tool("alpha", "send email messages", "", true))
	b := providertest.New(catalog.ProviderInfo{ID: "b"}, providertest.Tool("beta", "resize images", "", true))
	r := registry.New(nil)
	if err := r.Add(a); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(b); err != nil {
		t.Fatal(err)
	}
	changes := 0
	r.OnChange(func() { changes++ })
	r.Refresh(context.Background())
	b.SetTools(providertest.Tool("gamma", "compress video files", "", true))
	r.Refresh(context.Background())
	if changes != 2 {
		t.Fatalf("changes = %d", changes)
	}
	if hits := r.Search("video", index.Options{}); len(hits) != 1 || hits[0].ID != "b_gamma" {
		t.Fatalf("search after change = %+v", hits)
	}
	if _, ok := r.Lookup("b_beta"); ok {
		t.Fatal("removed tool still resolvable")
	}
	if err := r.SetEnabled(context.Background(), "a", false); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("a_alpha"); ok || len(r.Search("email", index.Options{})) != 0 {
		t.Fatal("disabled provider still visible")
	}
	if err := r.SetEnabled(context.Background(), "a", true); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("a_alpha"); !ok {
		t.Fatal("re-enabled provider not visible")
	}
	if err := r.SetEnabled(context.Background(), "zz", true); err == nil {
		t.Fatal("unknown provider accepted")
	}
}

func TestSkillNamedLikeAToolIsSkipped(t *testing.T) {
	local := providertest.New(catalog.ProviderInfo{ID: "local", HostLocal: true},
		providertest.Tool("deploy", "Deploy", "", false))
	local.SetSkills(catalog.Skill{Name: "deploy", Description: "a recipe named like the script"},
		catalog.Skill{Name: "release", Description: "a recipe"})
	gh := providertest.New(catalog.ProviderInfo{ID: "gh"}, providertest.Tool("triage", "Triage", "", true))
	gh.SetSkills(catalog.Skill{Name: "triage", Description: "same canonical as the tool gh_triage"},
		catalog.Skill{Name: "open", Description: "fine"})
	r := registry.New(nil)
	for _, p := range []*providertest.Fake{local, gh} {
		if err := r.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	r.Refresh(context.Background())
	tests := []struct {
		provider, skill string
		served          bool
	}{
		{"local", "deploy", false}, // bare canonical "deploy" is the local tool's
		{"local", "release", true},
		{"gh", "triage", false}, // gh_triage is the tool's
		{"gh", "open", true},
	}
	for _, tt := range tests {
		if _, ok := r.Skill(tt.provider, tt.skill); ok != tt.served {
			t.Errorf("skill %s:%s served = %v, want %v", tt.provider, tt.skill, ok, tt.served)
		}
	}
	if got := len(r.Skills("gh")); got != 1 {
		t.Errorf("gh serves %d skills, want 1", got)
	}
	var reasons []string
	for _, d := range r.Diagnostics() {
		if d.Status == "skipped" && strings.HasPrefix(d.Item, "skill ") {
			reasons = append(reasons, d.Provider+" "+d.Item+": "+d.Reason)
		}
	}
	want := []string{
		`local skill deploy: skill name "deploy" is already a tool's (of provider "local"); the tool is kept`,
		`gh skill triage: skill name "gh_triage" is already a tool's (of provider "gh"); the tool is kept`,
	}
	if strings.Join(reasons, "\n") != strings.Join(want, "\n") {
		t.Errorf("doctor lines:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
	// The skipped skill is not searchable either.
	for _, h := range r.Search("recipe named like the script", index.Options{}) {
		if h.ID == registry.SkillID("local", "deploy") {
			t.Errorf("a skipped skill is indexed: %+v", h)
		}
	}
	// When the tool goes away, the skill is served.
	local.SetTools()
	r.Refresh(context.Background())
	if _, ok := r.Skill("local", "deploy"); !ok {
		t.Error("the skill stays hidden after the tool that took its name went away")
	}
}
