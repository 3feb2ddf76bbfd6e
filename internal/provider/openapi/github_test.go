package openapi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// githubDoc is GitHub's REST API description from the pinned npm package
// @octokit/openapi (interop/package-lock.json).
var githubDoc = filepath.Join("..", "..", "..", "interop", "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")

func needGitHubDoc(t testing.TB) {
	t.Helper()
	if raceOn {
		t.Skip("GitHub's 13 MB document takes minutes under the race detector; scripts/test.sh runs this test once without -race")
	}
	if _, err := os.Stat(githubDoc); err != nil {
		t.Skipf("GitHub's OpenAPI document is not installed (%v): run npm ci --prefix interop", err)
	}
}

func loadGitHub(t testing.TB, o Options) *Provider {
	t.Helper()
	o.ID, o.Spec = "gh", githubDoc
	if o.CacheDir == "" {
		o.CacheDir = t.TempDir() // cold: measure the parse
	}
	p := New(o)
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

// compile compiles a generated schema the way the pipeline does.
func compile(raw json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		return err
	}
	_, err = c.Compile("mem:///s.json")
	return err
}

func TestGitHubDocument(t *testing.T) {
	needGitHubDoc(t)
	start := time.Now()
	p := loadGitHub(t, Options{})
	took := time.Since(start)
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	skipped := p.Diagnostics()[1:]
	t.Logf("GitHub: %d operations as tools, %d skipped, loaded in %s", len(tools), len(skipped), took)
	for _, d := range skipped {
		t.Logf("skipped %s: %s", d.Item, d.Reason)
	}
	if len(tools) < 1000 {
		t.Fatalf("only %d tools from GitHub's document", len(tools))
	}
	byName := map[string]bool{}
	outputs := 0
	for _, tl := range tools {
		byName[tl.Name] = true
		if err := compile(tl.InputSchema); err != nil {
			t.Errorf("%s: input schema does not compile: %v", tl.Name, err)
		}
		if tl.OutputSchema != nil {
			outputs++
			if err := compile(tl.OutputSchema); err != nil {
				t.Errorf("%s: output schema does not compile: %v", tl.Name, err)
			}
		}
	}
	t.Logf("%d tools carry an output schema", outputs)
	for _, name := range []string{"repos/list-for-org", "issues/create", "search/code", "repos/get"} {
		if !byName[name] {
			t.Errorf("tool %q missing", name)
		}
	}
}

// BenchmarkGitHubLoad loads GitHub's whole document cold (parse and
// convert every operation, an empty cache each time) and warm (the
// converted tools read back from the cache), and reports the tool count
// and the heap the loaded provider keeps.
func BenchmarkGitHubLoad(b *testing.B) {
	needGitHubDoc(b)
	b.Run("cold", func(b *testing.B) {
		var tools int
		for b.Loop() {
			p := New(Options{Header: provider.Header{ID: "gh"}, Spec: githubDoc, CacheDir: b.TempDir()})
			if err := p.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			tools = len(p.tools)
		}
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p := New(Options{Header: provider.Header{ID: "gh"}, Spec: githubDoc, CacheDir: b.TempDir()})
		if err := p.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(p)
		b.ReportMetric(float64(tools), "tools")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-retained")
	})
	b.Run("cached", func(b *testing.B) {
		dir := b.TempDir()
		if err := New(Options{Header: provider.Header{ID: "gh"}, Spec: githubDoc, CacheDir: dir}).Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		var tools int
		for b.Loop() {
			p := New(Options{Header: provider.Header{ID: "gh"}, Spec: githubDoc, CacheDir: dir})
			if err := p.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			if p.conversions != 0 {
				b.Fatal("the cache was not used")
			}
			tools = len(p.tools)
		}
		b.ReportMetric(float64(tools), "tools")
	})
}

func TestGitHubIncludeExclude(t *testing.T) {
	needGitHubDoc(t)
	tests := []struct {
		include, exclude []string
		check            func(names []string) string
	}{
		{[]string{"repos/*", "issues/*"}, []string{"repos/delete*"}, func(names []string) string {
			for _, n := range names {
				if !strings.HasPrefix(n, "repos/") && !strings.HasPrefix(n, "issues/") || strings.HasPrefix(n, "repos/delete") {
					return "unexpected " + n
				}
			}
			if !slices.Contains(names, "repos/list-for-org") || !slices.Contains(names, "issues/create") || slices.Contains(names, "repos/delete") {
				return "missing repos/list-for-org or issues/create, or kept repos/delete"
			}
			return ""
		}},
		{[]string{"search"}, nil, func(names []string) string { // a tag
			if len(names) < 5 || !slices.Contains(names, "search/code") {
				return "search tag not selected"
			}
			return ""
		}},
	}
	data, err := os.ReadFile(githubDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseDocument(githubDoc, data) // once: parsing is the slow part
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		_, tools, _ := buildOperations("gh", doc, selection{include: tt.include, exclude: tt.exclude})
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		if msg := tt.check(names); msg != "" {
			t.Errorf("include %v exclude %v → %d tools: %s", tt.include, tt.exclude, len(names), msg)
		}
	}
}

// TestGitHubCalls sends real GitHub operations to a local stand-in for
// api.github.com and checks the exact request.
func TestGitHubCalls(t *testing.T) {
	needGitHubDoc(t)
	b := newBackend(t, nil)
	p := loadGitHub(t, Options{BaseURL: b.URL, Include: []string{"repos/list-for-org", "issues/create", "repos/get", "search/code", "repos/compare-commits", "issues/add-labels"},
		Auth: &Auth{Bearer: "ghp_test"}})
	if len(p.tools) != 6 {
		t.Fatalf("%d tools", len(p.tools))
	}
	tests := []struct {
		tool, args string
		want       seen
	}{
		{"repos/list-for-org", `{"org":"golang","type":"public","per_page":5,"page":2}`, seen{Method: "GET", Path: "/orgs/golang/repos", Query: "page=2&per_page=5&type=public"}},
		{"repos/get", `{"owner":"octo cat","repo":"hello"}`, seen{Method: "GET", Path: "/repos/octo%20cat/hello"}},
		{"repos/compare-commits", `{"owner":"o","repo":"r","base":"main","head":"dev"}`, seen{Method: "GET", Path: "/repos/o/r/compare/main...dev"}},
		{"search/code", `{"q":"addClass in:file language:js"}`, seen{Method: "GET", Path: "/search/code", Query: "q=addClass+in%3Afile+language%3Ajs"}},
		{"issues/create", `{"owner":"o","repo":"r","title":"Bug","body":"It breaks","labels":["bug"]}`, seen{Method: "POST", Path: "/repos/o/r/issues", Body: `{"body":"It breaks","labels":["bug"],"title":"Bug"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			tool := toolNamed(t, p, tt.tool)
			if err := validate(tool.InputSchema, tt.args); err != nil {
				t.Fatalf("arguments do not validate: %v", err)
			}
			res, err := call(t, p, tt.tool, tt.args)
			if err != nil || res.IsError {
				t.Fatalf("call = %+v, %v", res, err)
			}
			got := b.last(t)
			if got.Method != tt.want.Method || got.Path != tt.want.Path || got.Query != tt.want.Query || got.Body != tt.want.Body {
				t.Errorf("request = %s %s ?%s %s\n want %s %s ?%s %s", got.Method, got.Path, got.Query, got.Body, tt.want.Method, tt.want.Path, tt.want.Query, tt.want.Body)
			}
			if a := got.Header.Get("Authorization"); a != "Bearer ghp_test" {
				t.Errorf("Authorization = %q", a)
			}
		})
	}
	if ro := toolNamed(t, p, "issues/create").ReadOnly; ro {
		t.Error("issues/create is read-only")
	}
}

func validate(schema json.RawMessage, args string) error {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(schema)))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		return err
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return err
	}
	return s.Validate(v)
}
