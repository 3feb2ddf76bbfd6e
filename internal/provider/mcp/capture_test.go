package mcp

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonrpcwire"
	"github.com/agent-tools/agent-tools/internal/provider"
)

var listResults = []string{
	`{"tools":[]}`,
	`{}`,
	`{"tools":null,"nextCursor":"c2"}`,
	`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}],"nextCursor":"next"}`,
	`{"tools":[{"name":"a","title":"A","description":"does \"a\" \u00e9","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"title":"T"},"_meta":{"k":1},"icons":[{"src":"https://x/i.png"}]}]}`,
	"{\"tools\":[{\"name\":\"ind\",\"inputSchema\":{\n  \"type\": \"object\",\n  \"required\": [\"x\"]\n}}]}",
	`{"tools":[{"name":"s","inputSchema":"x"},{"name":"arr","inputSchema":{"type":"array"}},{"name":"n","inputSchema":null},{"name":"m"},{"inputSchema":{}},{"name":"s","inputSchema":{}}]}`,
	`{"tools":[{"name":"d","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}],"ttlMs":60000,"_meta":{"x":"y"}}`,
	`{"tools":[{"name":"k","inputSchema":{"type":"object","type":"array"}}]}`,
	`{"Tools":[{"name":"case"}]}`,
	`{"tools":[{"Name":"case","inputSchema":{}}]}`,
	` {"tools":[{"name":"sp","inputSchema":{ "type" : "object" }}]} `,
}

// parseToolsList accepts what the SDK's decoding accepts, and its tools
// make the same catalog tools and diagnostics as the SDK's decoded ones.
func TestParseToolsListMatchesSDK(t *testing.T) {
	for _, in := range listResults {
		checkParseAgainstSDK(t, []byte(in), true)
	}
	for _, in := range []string{``, `null`, `[]`, `"x"`, `{"tools":{}}`, `{"tools":[1]}`, `{"tools":[{"name":5}]}`, `{"nextCursor":3}`, `{"tools":[`, `{"tools":[{"name":"a","inputSchema":{"type":"object"}]}`} {
		if _, _, ok := parseToolsList([]byte(in)); ok {
			t.Errorf("parseToolsList(%s) accepted it", in)
		}
	}
	tools, cursor, ok := parseToolsList([]byte(listResults[5]))
	if !ok || cursor != "" || string(tools[0].InputSchema) != `{"type":"object","required":["x"]}` {
		t.Errorf("an indented schema: %s, %q, %v", tools[0].InputSchema, cursor, ok)
	}
	if _, cursor, _ := parseToolsList([]byte(listResults[3])); cursor != "next" {
		t.Errorf("cursor = %q", cursor)
	}
}

func FuzzParseToolsList(f *testing.F) {
	for _, in := range listResults {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) <= 1024 {
			checkParseAgainstSDK(t, in, false)
		}
	})
}

// checkParseAgainstSDK compares parseToolsList with the SDK's decoding of
// a tools/list result (its decoder, then fromSDK) where both accept it.
func checkParseAgainstSDK(t *testing.T, in []byte, mustAccept bool) {
	t.Helper()
	tools, cursor, ok := parseToolsList(in)
	if !ok {
		if mustAccept {
			t.Errorf("parseToolsList(%s) refused it", in)
		}
		return
	}
	var res sdk.ListToolsResult
	if err := jsonrpcwire.Unmarshal(in, &res); err != nil {
		t.Fatalf("parseToolsList(%s) accepted what the SDK refuses: %v", in, err)
	}
	if cursor != res.NextCursor {
		t.Fatalf("%s: cursor %q, the SDK's %q", in, cursor, res.NextCursor)
	}
	// The SDK drops null entries (filterValidTools); both are compared without them.
	tools = slices.DeleteFunc(tools, func(t *listedTool) bool { return t == nil })
	res.Tools = slices.DeleteFunc(res.Tools, func(t *sdk.Tool) bool { return t == nil })
	p := New(Options{Header: provider.Header{ID: "x"}, Command: "x", CacheDir: t.TempDir(), TrustAnnotations: true})
	defer p.Close()
	got, gotDiags := p.convert(tools)
	want, wantDiags := p.convert(liveList(res.Tools))
	if len(got) != len(want) || !slices.Equal(gotDiags, wantDiags) {
		t.Fatalf("%s: %d tools %v, the SDK's %d tools %v", in, len(got), gotDiags, len(want), wantDiags)
	}
	for i := range got {
		a, b := got[i], want[i]
		if a.Name != b.Name || a.Title != b.Title || a.Description != b.Description || a.ReadOnly != b.ReadOnly || a.AlwaysConfirm != b.AlwaysConfirm ||
			!sameJSON(t, a.InputSchema, b.InputSchema) || !sameJSON(t, a.OutputSchema, b.OutputSchema) || !validCompact(a) {
			t.Fatalf("%s: tool %d is %+v, the SDK's %+v", in, i, a, b)
		}
	}
}

// validCompact: a captured schema is served as it is, so it must be valid
// JSON on one line.
func validCompact(ct catalog.Tool) bool {
	return json.Valid(ct.InputSchema) && !strings.Contains(string(ct.InputSchema), "\n")
}

// A tools/list result is taken off the wire only for our own tools/list
// call, matched by id, once; anything else passes to the SDK untouched.
func TestListCaptureCorrelates(t *testing.T) {
	c := newListCapture()
	list := func(id int64) *jsonrpc.Request {
		return &jsonrpc.Request{ID: mustID(id), Method: "tools/list"}
	}
	result := json.RawMessage(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"n","ttlMs":5000}`)
	respond := func(id int64, r json.RawMessage, err *jsonrpc.Error) *jsonrpc.Response {
		resp := &jsonrpc.Response{ID: mustID(id), Result: r}
		if err != nil {
			resp.Error = err
		}
		c.received(resp)
		return resp
	}
	decode := func(resp *jsonrpc.Response) *sdk.ListToolsResult {
		var res sdk.ListToolsResult
		if err := jsonrpcwire.Unmarshal(resp.Result, &res); err != nil {
			t.Fatal(err)
		}
		return &res
	}

	// Not ours: another method, a notification, an id never sent.
	c.sent(&jsonrpc.Request{ID: mustID(1), Method: "tools/call"})
	c.sent(&jsonrpc.Request{Method: "tools/list"})
	for _, id := range []int64{1, 2} {
		if r := respond(id, result, nil); string(r.Result) != string(result) {
			t.Fatalf("response %d was touched: %s", id, r.Result)
		}
	}

	// Ours: a stub with the cursor, the page once.
	c.sent(list(3))
	r := respond(3, result, nil)
	res := decode(r)
	if len(res.Tools) != 0 || res.NextCursor != "n" || res.TTLMs != 0 {
		t.Fatalf("stub = %s", r.Result)
	}
	tools, err := c.page(res)
	if err != nil || len(tools) != 1 || tools[0].Name != "a" {
		t.Fatalf("page = %v, %v", tools, err)
	}
	if _, err := c.page(res); !errors.Is(err, errCaptureLost) {
		t.Fatalf("a page taken twice: %v", err)
	}
	if r := respond(3, result, nil); string(r.Result) != string(result) {
		t.Fatal("a second response with the same id was captured")
	}

	// An error, a result that does not decode: untouched, the SDK's tools used.
	c.sent(list(4))
	if r := respond(4, nil, &jsonrpc.Error{Code: 1, Message: "no"}); r.Result != nil {
		t.Fatal("an error response was touched")
	}
	c.sent(list(5))
	bad := json.RawMessage(`{"tools":[{"name":5}]}`)
	if r := respond(5, bad, nil); string(r.Result) != string(bad) {
		t.Fatal("a result that does not decode was touched")
	}
	own := &sdk.ListToolsResult{Tools: []*sdk.Tool{{Name: "b", InputSchema: map[string]any{"type": "object"}}}}
	if tools, err := c.page(own); err != nil || len(tools) != 1 || tools[0].Name != "b" {
		t.Fatalf("the SDK's own result: %v, %v", tools, err)
	}
	// An upstream's own _meta with the key, tools present: its tools.
	own.Meta = sdk.Meta{captureMeta: "1"}
	if tools, err := c.page(own); err != nil || len(tools) != 1 || tools[0].Name != "b" {
		t.Fatalf("a result with our key and tools: %v, %v", tools, err)
	}
	// No capture (a passthrough session): the SDK's tools.
	var none *listCapture
	none.sent(list(9))
	if tools, err := none.page(own); err != nil || len(tools) != 1 {
		t.Fatalf("no capture: %v, %v", tools, err)
	}

	// Bounded: pages never taken are dropped, oldest first.
	var stubs []*sdk.ListToolsResult
	for id := int64(10); id < 10+maxCapturePages+2; id++ {
		c.sent(list(id))
		stubs = append(stubs, decode(respond(id, result, nil)))
	}
	if _, err := c.page(stubs[0]); !errors.Is(err, errCaptureLost) {
		t.Errorf("the oldest page was kept: %v", err)
	}
	if tools, err := c.page(stubs[len(stubs)-1]); err != nil || len(tools) != 1 {
		t.Errorf("the newest page: %v, %v", tools, err)
	}
	for id := int64(100); id < 100+2*maxCaptureCalls; id++ {
		c.sent(list(id))
	}
	c.mu.Lock()
	calls, pages := len(c.calls), len(c.pages)
	c.mu.Unlock()
	if calls > maxCaptureCalls || pages > maxCapturePages {
		t.Errorf("calls %d, pages %d: over the bounds", calls, pages)
	}
}

func mustID(n int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		panic(err)
	}
	return id
}
