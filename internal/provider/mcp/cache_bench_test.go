package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// generated is a list of n tools shaped like bench/startup's upstream.
func generated(n int) []*sdk.Tool {
	out := make([]*sdk.Tool, n)
	for i := range out {
		out[i] = &sdk.Tool{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: fmt.Sprintf("Read the file of a folder (generated tool %d).", i),
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"id":    map[string]any{"type": "string", "description": "the file id <b>"},
				"limit": map[string]any{"type": "integer", "description": "at most this many", "minimum": 1.5e3},
			}, "required": []any{"id"}},
		}
	}
	return out
}

// liveList is raw as listTools returns it.
func liveList(raw []*sdk.Tool) []*listedTool {
	out := make([]*listedTool, len(raw))
	for i, t := range raw {
		out[i] = fromSDK(t)
	}
	return out
}

// A warm start's tools from the cache are exactly what the same list gives
// live (schemas byte for byte), from a compact cache file and from an
// indented one an earlier version wrote.
func TestCachedToolsEqualLive(t *testing.T) {
	raw := generated(50)
	raw = append(raw, nil, &sdk.Tool{Name: "noschema"}, &sdk.Tool{Name: "str", InputSchema: "x"},
		&sdk.Tool{Name: "arr", InputSchema: map[string]any{"type": "array"}}, &sdk.Tool{Name: "tool_3"},
		&sdk.Tool{Name: "out", InputSchema: map[string]any{}, OutputSchema: map[string]any{"type": "object"},
			Annotations: &sdk.ToolAnnotations{Title: "Out", ReadOnlyHint: true}})
	p := New(Options{Header: provider.Header{ID: "x"}, Command: "x", CacheDir: t.TempDir(), TrustAnnotations: true})
	defer p.Close()
	wantTools, wantDiags := p.convert(liveList(raw))

	if err := p.cache.save(liveList(raw), nil, nil); err != nil {
		t.Fatal(err)
	}
	c, err := p.cache.load()
	if err != nil {
		t.Fatal(err)
	}
	gotTools, gotDiags := p.convert(c.Tools)
	same := func(a, b catalog.Tool) bool {
		return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description && a.ReadOnly == b.ReadOnly &&
			a.AlwaysConfirm == b.AlwaysConfirm && string(a.InputSchema) == string(b.InputSchema) && string(a.OutputSchema) == string(b.OutputSchema)
	}
	if !slices.EqualFunc(gotTools, wantTools, same) || len(wantTools) != 51 {
		t.Fatalf("cached tools differ from live ones:\n%+v\n%+v", gotTools[:2], wantTools[:2])
	}
	if !slices.Equal(gotDiags, wantDiags) || len(wantDiags) != 5 {
		t.Fatalf("diagnostics differ:\n%v\n%v", gotDiags, wantDiags)
	}
	// The live list's digest of a cached list is the one it had live.
	p.mu.Lock()
	p.setCachedToolsLocked(c)
	changed := p.setToolsLocked(liveList(raw))
	p.mu.Unlock()
	if changed {
		t.Fatal("the same list, live after cached, counted as a change")
	}
}

// BenchmarkCachedList compares, side by side, the two ways a warm start has
// turned its cached tool list into tools: decoding it into SDK values (each
// schema a map) and encoding every schema again (before), and decoding it
// with the schemas left as the JSON the cache holds (now).
//
//	go test -run '^$' -bench CachedList -benchmem ./internal/provider/mcp/
func BenchmarkCachedList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		p := New(Options{Header: provider.Header{ID: "x"}, Command: "x", CacheDir: b.TempDir()})
		if err := p.cache.save(liveList(generated(n)), nil, nil); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tools=%d/before", n), func(b *testing.B) {
			for b.Loop() {
				data, err := os.ReadFile(p.cache.path)
				if err != nil {
					b.Fatal(err)
				}
				var f cacheFile // what load did before
				if err := json.Unmarshal(data, &f); err != nil {
					b.Fatal(err)
				}
				var raw []*sdk.Tool
				if err := json.Unmarshal(f.Tools, &raw); err != nil {
					b.Fatal(err)
				}
				live := make([]*listedTool, len(raw))
				for i, t := range raw {
					live[i] = fromSDK(t)
				}
				p.convert(live)
			}
		})
		b.Run(fmt.Sprintf("tools=%d/now", n), func(b *testing.B) {
			for b.Loop() {
				c, err := p.cache.load()
				if err != nil {
					b.Fatal(err)
				}
				p.convert(c.Tools)
			}
		})
		p.Close()
	}
}

// memberOf agrees with decoding the object into a map, or declines.
func TestMemberOf(t *testing.T) {
	for _, in := range []string{
		`{}`, `{"type":"object"}`, `{"a":{"type":"array"},"type":"object"}`, `{"a":"}\"type","type":"x"}`,
		`{"type":"object","type":"array"}`, `{ "type" : "object" , "b" : [1,{"c":"]"}] }`, `{"b":1.5e3,"type":null}`,
		`{"Type":"array"}`, `{"t\u0079pe":"array"}`, `[]`, `"x"`, `{"a":true,"type":["object","null"]}`, `{"a":"\\","type":1}`,
	} {
		checkMemberOf(t, []byte(in))
	}
}

func FuzzMemberOf(f *testing.F) {
	f.Add([]byte(`{"a":{"type":"array"},"type":"object"}`))
	f.Add([]byte(`{"a":"\\\"","type":[1,{"x":"}"}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) <= 256 && json.Valid(in) {
			checkMemberOf(t, in)
		}
	})
}

func checkMemberOf(t *testing.T, in []byte) {
	t.Helper()
	got, ok := memberOf(in, "type")
	var m map[string]json.RawMessage
	if json.Unmarshal(in, &m) != nil {
		if ok {
			t.Fatalf("memberOf(%s) = %s, true for a non-object", in, got)
		}
		return
	}
	if !ok {
		return // declined: the caller decodes
	}
	want, present := m["type"]
	var cg, cw bytes.Buffer
	if got != nil {
		if err := json.Compact(&cg, got); err != nil {
			t.Fatalf("memberOf(%s) = %q: not JSON: %v", in, got, err)
		}
	}
	if present {
		if err := json.Compact(&cw, want); err != nil {
			t.Fatalf("type member of %s: %v", in, err)
		}
	}
	if (got != nil) != present || cg.String() != cw.String() {
		t.Fatalf("memberOf(%s) = %q, want %q (present %v)", in, got, want, present)
	}
}
