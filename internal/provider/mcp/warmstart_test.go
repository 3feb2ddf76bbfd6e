package mcp

import (
	"context"
	"github.com/agent-tools/agent-tools/internal/provider"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWarmStartKeepsTools guards a regression: a call after a warm start
// (the live list equal to the cached one) rewrote the cache with
// "tools":null, and every later run saw no tools and never started the
// upstream again. Each step is a new runtime, as each CLI command is:
// list → call → list → serve (its first call) → list, counting the tools.
func TestWarmStartKeepsTools(t *testing.T) {
	o, dir := stdioOptions(t, "sdk")
	ctx := context.Background()
	count := func(step string) {
		t.Helper()
		p := newProvider(t, o)
		tools, err := p.Tools(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := names(tools); !slices.Equal(got, sdkTools) {
			t.Fatalf("%s: tools = %v, want %v", step, got, sdkTools)
		}
		p.Close()
		files, _ := filepath.Glob(filepath.Join(o.CacheDir, "ev-*.json"))
		if len(files) != 1 {
			t.Fatalf("%s: cache files = %v", step, files)
		}
		data, _ := os.ReadFile(files[0])
		if strings.Contains(string(data), `"tools":null`) || strings.Contains(string(data), `"tools":[]`) {
			t.Fatalf("%s: cache lost the tools: %.200s", step, data)
		}
	}
	callOnce := func(step string) {
		t.Helper()
		p := newProvider(t, o)
		if err := p.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if res := mustCall(t, p, "echo", `{"text":"hi"}`); res.Text != "hi" {
			t.Fatalf("%s: echo = %+v", step, res)
		}
		p.Close()
	}
	count("list (cold)")
	callOnce("call (warm)")
	count("list after the call")
	callOnce("serve's first call")
	count("list after serve")
	if n := starts(dir); n != 3 {
		t.Errorf("upstream starts = %d, want 3 (the cold list and the two calls)", n)
	}
}

// TestEmptyCacheIsAMiss: a cache file that holds no tools (written by the
// bug above) is not a warm start; the upstream is asked and the file is
// rewritten from what it sends.
func TestEmptyCacheIsAMiss(t *testing.T) {
	for _, tools := range []string{`null`, `[]`} {
		t.Run(tools, func(t *testing.T) {
			o, dir := stdioOptions(t, "sdk")
			path := filepath.Join(o.CacheDir, "ev-"+cacheKey(o)+".json")
			if err := os.MkdirAll(o.CacheDir, 0o700); err != nil {
				t.Fatal(err)
			}
			bad := `{"version":1,"provider":"ev","saved":"2026-01-01T00:00:00Z","tools":` + tools + "}\n"
			if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			p := newProvider(t, o)
			got, err := p.Tools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(got), sdkTools) {
				t.Errorf("tools = %v", names(got))
			}
			if starts(dir) != 1 {
				t.Errorf("starts = %d: an empty cache must not stand in for the upstream", starts(dir))
			}
			p.Close()
			data, _ := os.ReadFile(path)
			if !strings.Contains(string(data), `"name":"echo"`) {
				t.Errorf("cache not rewritten: %.200s", data)
			}
		})
	}
}

// TestSaveNeverWritesNoList: save without a list the upstream sent keeps
// the file as it is.
func TestSaveNeverWritesNoList(t *testing.T) {
	c := newDiskCache(Options{Header: provider.Header{ID: "ev"}, CacheDir: t.TempDir(), Command: "x"})
	if err := c.save([]*listedTool{{Name: "a", InputSchema: []byte(`{"type":"object"}`)}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(c.path)
	if err := c.save(nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(c.path)
	if string(before) != string(after) {
		t.Errorf("save(nil) rewrote the cache:\n%s\n%s", before, after)
	}
}
