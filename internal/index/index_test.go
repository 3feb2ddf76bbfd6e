package index

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// sampleDocs is a small catalog: three providers, tools and one skill.
var sampleDocs = map[string][]Doc{
	"github": {
		{ID: "github.list_repos", Kind: "tool", Provider: "github", ProviderDescription: "GitHub repositories, issues and pull requests", Name: "list_repos", Description: "List repositories of a user or organization.",
			Params: []Param{{Name: "owner", Description: "User or organization"}}},
		{ID: "github.getRepo", Kind: "tool", Name: "getRepo", Description: "Get one repository by owner and name."},
		{ID: "github.create-issue", Kind: "tool", Name: "create-issue", Description: "Open a new issue in a repository.",
			Params: []Param{{Name: "title"}, {Name: "body"}, {Name: "labels", Enum: []string{"bug", "enhancement"}}}},
		{ID: "github.delete_repo", Kind: "tool", Name: "delete_repo", Description: "Delete a repository permanently."},
		{ID: "skill:github:triage", Kind: "skill", Name: "triage", Description: "Triage new issues: label and assign them."},
	},
	"fs": {
		{ID: "fs.read_file", Kind: "tool", ProviderDescription: "Local filesystem", Name: "read_file", Description: "Read the contents of a file."},
		{ID: "fs.write_file", Kind: "tool", Name: "write_file", Description: "Write content to a file, creating it if needed."},
		{ID: "fs.list_directory", Kind: "tool", Name: "list_directory", Description: "List the entries of a directory."},
	},
	"slack": {
		{ID: "slack.post_message", Kind: "tool", ProviderDescription: "Slack workspace messaging", Name: "post_message", Description: "Post a message to a channel."},
		{ID: "slack.list_channels", Kind: "tool", Name: "list_channels", Description: "List channels of the workspace."},
	},
}

func sampleIndex(order ...string) *Index {
	if len(order) == 0 {
		order = []string{"github", "fs", "slack"}
	}
	ix := New()
	for _, p := range order {
		ix.Replace(p, sampleDocs[p])
	}
	return ix
}

func ids(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

func TestExactNameRanksFirst(t *testing.T) {
	ix := sampleIndex()
	for q, want := range map[string]string{
		"list_repos":          "github.list_repos",
		"getRepo":             "github.getRepo",
		"create-issue":        "github.create-issue",
		"write_file":          "fs.write_file",
		"list directory":      "fs.list_directory",
		"post message":        "slack.post_message",
		"delete a repository": "github.delete_repo",
	} {
		hs := ix.Search(q, Options{})
		if len(hs) == 0 || hs[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, ids(hs), want)
		}
	}
}

func TestLexiconAndStemming(t *testing.T) {
	ix := sampleIndex()
	for q, want := range map[string]string{
		"remove repo":                "github.delete_repo",  // synonym + abbreviation
		"send a msg to the channel":  "slack.post_message",  // synonym + abbreviation
		"save text into a file":      "fs.write_file",       // save ~ write
		"show the repositories list": "github.list_repos",   // plural / stem
		"folder entries":             "fs.list_directory",   // abbreviation group dir/directory/folder
		"enhancement":                "github.create-issue", // enum value as evidence
		"triage issues":              "skill:github:triage", // skills are indexed too
		"MySQL":                      "",                    // no match: nothing, no panic
	} {
		hs := ix.Search(q, Options{})
		if want == "" {
			if len(hs) != 0 {
				t.Errorf("Search(%q) = %v, want nothing", q, ids(hs))
			}
			continue
		}
		if len(hs) == 0 || hs[0].ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, ids(hs), want)
		}
	}
}

func TestFilters(t *testing.T) {
	ix := sampleIndex()
	for _, h := range ix.Search("list", Options{Provider: "fs"}) {
		if h.Provider != "fs" {
			t.Errorf("provider filter leaked %v", h)
		}
	}
	if hs := ix.Search("list", Options{Provider: "nope"}); len(hs) != 0 {
		t.Errorf("unknown provider returned %v", ids(hs))
	}
	hs := ix.Search("issues", Options{Kind: "skill"})
	if len(hs) != 1 || hs[0].ID != "skill:github:triage" || hs[0].Kind != "skill" {
		t.Errorf("kind filter: %v", hs)
	}
	for _, h := range ix.Search("issues", Options{Kind: "tool"}) {
		if h.Kind != "tool" {
			t.Errorf("kind filter leaked %v", h)
		}
	}
	if hs := ix.Search("list", Options{Limit: 2}); len(hs) != 2 {
		t.Errorf("limit 2 gave %d hits", len(hs))
	}
	if hs := ix.Search("a file or a repo or a message or a channel", Options{}); len(hs) > DefaultLimit {
		t.Errorf("default limit exceeded: %d", len(hs))
	}
}

func TestEmptyQuery(t *testing.T) {
	ix := sampleIndex()
	for _, q := range []string{"", "   ", "the of and", "?!"} {
		if hs := ix.Search(q, Options{}); hs != nil {
			t.Errorf("Search(%q) = %v, want nil", q, hs)
		}
	}
	if hs := New().Search("anything", Options{}); hs != nil {
		t.Errorf("empty index returned %v", hs)
	}
}

func TestDeterministicTies(t *testing.T) {
	ix := New()
	var docs []Doc
	for i := 9; i >= 0; i-- { // identical text, IDs inserted out of order
		docs = append(docs, Doc{ID: fmt.Sprintf("p.tool%d", i), Name: "same", Description: "identical text"})
	}
	ix.Replace("p", docs)
	first := ix.Search("identical", Options{Limit: 10})
	if len(first) != 10 {
		t.Fatalf("got %d hits", len(first))
	}
	got := ids(first)
	want := slices.Clone(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ties not ordered by ID: %v", got)
	}
	for range 20 {
		if again := ix.Search("identical", Options{Limit: 10}); !reflect.DeepEqual(again, first) {
			t.Fatalf("non-deterministic: %v vs %v", again, first)
		}
	}
	// The same content indexed in another order ranks the same.
	ix2, ix3 := sampleIndex(), sampleIndex("slack", "fs", "github")
	for _, q := range []string{"list", "repository issue", "Read the file and post a message to slack, then open an issue"} {
		if a, b := ix2.Search(q, Options{Limit: 20}), ix3.Search(q, Options{Limit: 20}); !reflect.DeepEqual(a, b) {
			t.Errorf("insertion order changed results for %q:\n%v\n%v", q, a, b)
		}
	}
}

func TestReplaceIsIncremental(t *testing.T) {
	ix := sampleIndex()
	ix.mu.RLock()
	gh, slack := ix.segs["github"], ix.segs["slack"]
	ghPost := gh.post["repo"]
	n0, builds0 := ix.nDocs, ix.segBuilds
	ix.mu.RUnlock()

	ix.Replace("fs", []Doc{{ID: "fs.stat", Name: "stat_file", Description: "File metadata: size, mode, times."}})

	ix.mu.RLock()
	if ix.segs["github"] != gh || ix.segs["slack"] != slack {
		t.Error("Replace(fs) rebuilt another provider's segment")
	}
	if len(ghPost) == 0 || &ix.segs["github"].post["repo"][0] != &ghPost[0] {
		t.Error("Replace(fs) touched github's postings")
	}
	if got := ix.segBuilds - builds0; got != 1 {
		t.Errorf("Replace(fs) built %d segments, want 1", got)
	}
	if ix.nDocs != n0-3+1 {
		t.Errorf("nDocs = %d, want %d", ix.nDocs, n0-2)
	}
	// Global statistics equal those of a fresh build of the same content.
	fresh := New()
	fresh.Replace("github", sampleDocs["github"])
	fresh.Replace("fs", []Doc{{ID: "fs.stat", Name: "stat_file", Description: "File metadata: size, mode, times."}})
	fresh.Replace("slack", sampleDocs["slack"])
	checkSameStats(t, ix, fresh)
	ix.mu.RUnlock()

	if hs := ix.Search("read file", Options{}); slices.Contains(ids(hs), "fs.read_file") {
		t.Error("replaced tool still found")
	}
	if hs := ix.Search("file metadata", Options{}); len(hs) == 0 || hs[0].ID != "fs.stat" {
		t.Errorf("new tool not found: %v", ids(hs))
	}
}

// checkSameStats compares the global counters of two indexes.
func checkSameStats(t *testing.T, a, b *Index) {
	t.Helper()
	if a.nDocs != b.nDocs || a.lenSum != b.lenSum || a.provLen != b.provLen {
		t.Errorf("totals differ: %d %v %v vs %d %v %v", a.nDocs, a.lenSum, a.provLen, b.nDocs, b.lenSum, b.provLen)
	}
	if len(a.terms) != len(b.terms) {
		t.Errorf("vocabulary sizes differ: %d vs %d", len(a.terms), len(b.terms))
	}
	for term, ta := range a.terms {
		tb := b.terms[term]
		if tb == nil || ta.df != tb.df || ta.pdf != tb.pdf || ta.fdf != tb.fdf || len(ta.segs) != len(tb.segs) {
			t.Errorf("term %q: %+v vs %+v", term, ta, tb)
		}
	}
}

func TestRemove(t *testing.T) {
	ix := sampleIndex()
	ix.Remove("github")
	ix.Remove("github") // idempotent
	ix.Remove("unknown")
	if hs := ix.Search("repository", Options{}); len(hs) != 0 {
		t.Errorf("removed provider still found: %v", ids(hs))
	}
	if ix.Len() != 5 {
		t.Errorf("Len = %d, want 5", ix.Len())
	}
	if got := ix.Providers(); !slices.Equal(got, []string{"fs", "slack"}) {
		t.Errorf("Providers = %v", got)
	}
	fresh := sampleIndex("fs", "slack")
	checkSameStats(t, ix, fresh)
	for _, q := range []string{"list", "write a file", "message"} {
		if a, b := ix.Search(q, Options{}), fresh.Search(q, Options{}); !reflect.DeepEqual(a, b) {
			t.Errorf("after Remove, %q ranks differently from a fresh index:\n%v\n%v", q, a, b)
		}
	}
	// Replace with nothing removes; slots are reused.
	ix.Replace("fs", nil)
	if ix.Len() != 2 {
		t.Errorf("Len = %d after Replace(fs, nil)", ix.Len())
	}
	ix.Replace("github", sampleDocs["github"])
	ix.Replace("fs", sampleDocs["fs"])
	if n := len(ix.slots); n != 10 {
		t.Errorf("slots not reused: %d", n)
	}
	if len(ix.terms) != len(sampleIndex().terms) {
		t.Error("vocabulary leaked terms of removed providers")
	}
}

func TestDuplicateIDsLastWins(t *testing.T) {
	ix := New()
	ix.Replace("p", []Doc{{ID: "p.x", Name: "alpha"}, {ID: "p.y", Name: "beta"}, {ID: "p.x", Name: "gamma"}})
	if ix.Len() != 2 {
		t.Fatalf("Len = %d", ix.Len())
	}
	if hs := ix.Search("alpha", Options{}); len(hs) != 0 {
		t.Errorf("overwritten doc found: %v", hs)
	}
	if hs := ix.Search("gamma", Options{}); len(hs) != 1 || hs[0].ID != "p.x" || hs[0].Kind != "tool" || hs[0].Provider != "p" {
		t.Errorf("got %v", hs)
	}
}

func TestConcurrentSearchReplace(t *testing.T) {
	ix := sampleIndex()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			qs := []string{"list repos", "write file", "post a message and then open an issue, finally read the file", "channel"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				for _, h := range ix.Search(qs[(i+w)%len(qs)], Options{Limit: 5}) {
					if h.ID == "" || h.Provider == "" {
						t.Errorf("bad hit %v", h)
						return
					}
				}
				_ = ix.Len()
			}
		}()
	}
	for i := range 200 {
		p := []string{"github", "fs", "slack", "extra"}[i%4]
		switch {
		case i%7 == 0:
			ix.Remove(p)
		case p == "extra":
			ix.Replace(p, []Doc{{ID: fmt.Sprintf("extra.t%d", i), Name: "extra_tool", Description: "list more things"}})
		default:
			ix.Replace(p, sampleDocs[p])
		}
	}
	close(stop)
	wg.Wait()
}

func FuzzSearch(f *testing.F) {
	for _, s := range []string{"list repos", "", "中文 搜索", "a.b/c_d-e", "\x00\xff", "Read /root/a.md, then save it to http://x.y and also delete", "cosmosdb postgresql"} {
		f.Add(s, "", "", 3)
	}
	f.Add("file", "fs", "tool", 0)
	f.Add("issue", "github", "skill", -1)
	ix := sampleIndex()
	// The same catalog with every optional technique on.
	ixAll := NewWithConfig(allOnConfig())
	for _, p := range []string{"github", "fs", "slack"} {
		ixAll.Replace(p, sampleDocs[p])
	}
	f.Fuzz(func(t *testing.T, q, provider, kind string, limit int) {
		if len(q) > 128 || len(provider) > 32 || len(kind) > 16 {
			return // bounded inputs: a query is a few words
		}
		limit %= 100
		for _, ix := range []*Index{ix, ixAll} {
			hs := ix.Search(q, Options{Provider: provider, Kind: kind, Limit: limit})
			want := limit
			if want <= 0 {
				want = DefaultLimit
			}
			if len(hs) > want {
				t.Fatalf("%d hits for limit %d", len(hs), limit)
			}
			for i, h := range hs {
				if (provider != "" && h.Provider != provider) || (kind != "" && h.Kind != kind) {
					t.Fatalf("filter leak: %v", h)
				}
				if i > 0 && (h.Score > hs[i-1].Score || (h.Score == hs[i-1].Score && h.ID < hs[i-1].ID)) {
					t.Fatalf("unsorted hits: %v", hs)
				}
			}
		}
		// Indexing arbitrary text must not panic either.
		for _, cfg := range []Config{DefaultConfig(), allOnConfig()} {
			ix2 := NewWithConfig(cfg)
			ix2.Replace(provider, []Doc{{ID: q, Name: q, Description: q, Params: []Param{{Name: q, Enum: []string{q}}}}})
			_ = ix2.Search(q, Options{})
		}
	})
}
