package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The list digest changes with every field of every entry, with the order
// and the number of entries, and not otherwise.
func TestListDigest(t *testing.T) {
	yes := true
	base := func() []*sdk.Tool {
		return []*sdk.Tool{
			{Name: "a", Title: "A", Description: "does a", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}},
				OutputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "a!"},
				Meta: sdk.Meta{"k": "v"}, Icons: []sdk.Icon{{Source: "https://x/i.png"}}},
			{Name: "b", InputSchema: map[string]any{"type": "object"}},
			{Name: "bad", InputSchema: "x"},
		}
	}
	digest := func(raw []*sdk.Tool) string { return listDigest(liveList(raw)) }
	want := digest(base())
	if want == "" || digest(base()) != want {
		t.Fatal("the same list has two digests")
	}
	for name, change := range map[string]func(l []*sdk.Tool) []*sdk.Tool{
		"name":         func(l []*sdk.Tool) []*sdk.Tool { l[1].Name = "c"; return l },
		"title":        func(l []*sdk.Tool) []*sdk.Tool { l[0].Title = "AA"; return l },
		"description":  func(l []*sdk.Tool) []*sdk.Tool { l[0].Description = "does b"; return l },
		"schema":       func(l []*sdk.Tool) []*sdk.Tool { l[0].InputSchema.(map[string]any)["required"] = []any{"x"}; return l },
		"inner schema": func(l []*sdk.Tool) []*sdk.Tool { l[1].InputSchema = map[string]any{"type": "object", "x": 1}; return l },
		"bad schema":   func(l []*sdk.Tool) []*sdk.Tool { l[2].InputSchema = "y"; return l },
		"output":       func(l []*sdk.Tool) []*sdk.Tool { l[0].OutputSchema = nil; return l },
		"annotation":   func(l []*sdk.Tool) []*sdk.Tool { l[0].Annotations.DestructiveHint = &yes; return l },
		"hint":         func(l []*sdk.Tool) []*sdk.Tool { l[0].Annotations.ReadOnlyHint = false; return l },
		"new hints":    func(l []*sdk.Tool) []*sdk.Tool { l[1].Annotations = &sdk.ToolAnnotations{}; return l },
		"meta":         func(l []*sdk.Tool) []*sdk.Tool { l[0].Meta["k"] = "w"; return l },
		"icons":        func(l []*sdk.Tool) []*sdk.Tool { l[0].Icons = nil; return l },
		"order":        func(l []*sdk.Tool) []*sdk.Tool { l[0], l[1] = l[1], l[0]; return l },
		"one less":     func(l []*sdk.Tool) []*sdk.Tool { return l[:2] },
		"one more":     func(l []*sdk.Tool) []*sdk.Tool { return append(l, &sdk.Tool{Name: "d", InputSchema: map[string]any{}}) },
		"a null":       func(l []*sdk.Tool) []*sdk.Tool { return append(l, nil) },
	} {
		if got := digest(change(base())); got == want {
			t.Errorf("a changed %s keeps the digest", name)
		}
	}
}

// No SDK tool value is reachable from the provider's state: the decoded
// live list (schemas as maps, ~14 MB at 10,000 tools) is garbage once
// converted.
func TestNoSDKToolListKept(t *testing.T) {
	bad := []reflect.Type{reflect.TypeFor[sdk.Tool](), reflect.TypeFor[sdk.ListToolsResult]()}
	pkg := reflect.TypeFor[Provider]().PkgPath()
	seen := map[reflect.Type]bool{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		if slices.Contains(bad, ty) {
			t.Errorf("%s holds a %v", path, ty)
			return
		}
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
			walk(path+"[]", ty.Elem())
		case reflect.Map:
			walk(path+"[key]", ty.Key())
			walk(path+"[]", ty.Elem())
		case reflect.Struct:
			if ty.PkgPath() != pkg { // the SDK's own session types are its business
				return
			}
			for f := range ty.Fields() {
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("Provider", reflect.TypeFor[Provider]())
	if !seen[reflect.TypeFor[listedTool]()] {
		t.Error("the walk never reached the provider's list (listedTool): it checks nothing")
	}
}

// A live list is cached as the upstream said it: the file's tools decode
// into the SDK's own form, list the same tools, and give the digest the
// live list had; a second provider builds the same tools from it.
func TestLiveListCacheRoundTrip(t *testing.T) {
	o, _ := stdioOptions(t, "sdk")
	ctx := context.Background()
	p1 := newProvider(t, o)
	live, err := p1.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p1.mu.Lock()
	capture := p1.sess.capture
	p1.mu.Unlock()
	capture.mu.Lock()
	captured := capture.seq
	capture.mu.Unlock()
	if captured == 0 {
		t.Error("the live list was not taken off the wire")
	}
	p1.Close() // waits for the cache write
	p1.mu.Lock()
	entries := p1.entries
	p1.mu.Unlock()
	if len(entries) != len(sdkTools) {
		t.Fatalf("the provider keeps %d entries, want %d", len(entries), len(sdkTools))
	}
	data, err := os.ReadFile(p1.cache.path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Tools []*sdk.Tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range f.Tools {
		got = append(got, tl.Name)
		if tl.InputSchema == nil {
			t.Errorf("cached %s has no input schema", tl.Name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, sdkTools) {
		t.Errorf("cached tools = %v", got)
	}
	c, err := p1.cache.load()
	if err != nil || c == nil {
		t.Fatalf("load: %v, %v", c, err)
	}
	if a, b := listDigest(c.Tools), listDigest(entries); a != b || a == "" {
		t.Errorf("the cached list's digest %s differs from the live one's %s", a, b)
	}
	// The same tools as the SDK's own decoding of the live list gives.
	sdkTools := liveList(f.Tools)
	for i, e := range entries {
		if !sameJSON(t, e.InputSchema, sdkTools[i].InputSchema) || e.Name != sdkTools[i].Name || e.Description != sdkTools[i].Description {
			t.Errorf("entry %d: %s %s, the SDK's %s %s", i, e.Name, e.InputSchema, sdkTools[i].Name, sdkTools[i].InputSchema)
		}
	}

	p2 := newProvider(t, o)
	cached, err := p2.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cached) != len(live) {
		t.Fatalf("%d tools from the cache, %d live", len(cached), len(live))
	}
	for i := range live {
		a, b := live[i], cached[i]
		if a.Name != b.Name || a.Description != b.Description || string(a.InputSchema) != string(b.InputSchema) || string(a.OutputSchema) != string(b.OutputSchema) || a.ReadOnly != b.ReadOnly {
			t.Errorf("tool %d: cached %+v, live %+v", i, b, a)
		}
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// The cache file is written as json.Marshal writes it.
func TestCacheFileEncode(t *testing.T) {
	tools, _ := json.Marshal(liveList(generated(3)))
	for _, f := range []cacheFile{
		{Version: 1, Provider: "x", Tools: json.RawMessage(`null`)},
		{Version: 1, Provider: `a"b<é>`, Tools: tools},
		{Version: 1, Provider: "x", Tools: json.RawMessage(`[]`), Prompts: json.RawMessage(`[{"name":"p"}]`), Init: json.RawMessage(`{"protocolVersion":"1"}`)},
	} {
		f.Saved = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.encode()
		if err != nil || string(got) != string(want) {
			t.Errorf("encode = %s, %v\nwant %s", got, err, want)
		}
		var back cacheFile
		if err := json.Unmarshal(got, &back); err != nil || !bytes.Equal(contentKey(back), contentKey(f)) {
			t.Errorf("the file read back has another content key (%v)", err)
		}
		g := f
		g.Tools = append(json.RawMessage(nil), `[{"name":"other"}]`...)
		if bytes.Equal(contentKey(g), contentKey(f)) {
			t.Error("other tools, the same content key")
		}
	}
}
