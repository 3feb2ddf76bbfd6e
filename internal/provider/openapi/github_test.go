package openapi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// githubDoc is GitHub's REST API description from the pinned npm package
// @octokit/openapi (interop/package-lock.json).
var githubDoc = filepath.Join("..", "..", "..", "interop", "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")

func needGitHubDoc(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(githubDoc); err != nil {
		t.Skipf("GitHub's OpenAPI document is not installed (%v): run npm ci --prefix interop", err)
	}
}

func loadGitHub(t testing.TB, o Options) *Provider {
	t.Helper()
	o.ID, o.Spec = "gh", githubDoc
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

// BenchmarkGitHubLoad loads GitHub's whole document: parse, convert every
// operation; it reports the tool count and the heap the loaded provider keeps.
func BenchmarkGitHubLoad(b *testing.B) {
	needGitHubDoc(b)
	var tools int
	for b.Loop() {
		p := New(Options{ID: "gh", Spec: githubDoc})
		if err := p.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		tools = len(p.tools)
	}
	b.StopTimer()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p := New(Options{ID: "gh", Spec: githubDoc})
	if err := p.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(p)
	b.ReportMetric(float64(tools), "tools")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-retained")
}
