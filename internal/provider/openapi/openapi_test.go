package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// seen is one request as the test server received it.
type seen struct {
	Method, Path, Query, Body string
	Header                    http.Header
}

// backend is a local stand-in for the API: it records every request and
// answers with reply.
type backend struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []seen
	reply func(w http.ResponseWriter, r *http.Request)
}

func newBackend(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *backend {
	t.Helper()
	b := &backend{reply: reply}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		b.mu.Lock()
		b.reqs = append(b.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, string(body), r.Header.Clone()})
		b.mu.Unlock()
		if b.reply != nil {
			b.reply(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *backend) requests() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.reqs)
}

func (b *backend) last(t *testing.T) seen {
	t.Helper()
	r := b.requests()
	if len(r) == 0 {
		t.Fatal("the backend got no request")
	}
	return r[len(r)-1]
}

func petsProvider(t *testing.T, b *backend, mod func(*Options)) *Provider {
	t.Helper()
	o := Options{Header: provider.Header{ID: "pets", ReadOnly: []string{"search/*"}, RequireConfirm: true}, Spec: "testdata/pets.yaml", BaseURL: b.URL + "/v1"}
	if mod != nil {
		mod(&o)
	}
	p := New(o)
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

func toolNamed(t *testing.T, p *Provider, name string) catalog.Tool {
	t.Helper()
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return catalog.Tool{}
}

func call(t *testing.T, p *Provider, name, args string) (*provider.Result, error) {
	t.Helper()
	return p.Call(context.Background(), catalog.Tool{Provider: p.opts.ID, Name: name}, json.RawMessage(args))
}

func TestPetsTools(t *testing.T) {
	p := petsProvider(t, newBackend(t, nil), nil)
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if err := compile(tl.InputSchema); err != nil {
			t.Errorf("%s: %v", tl.Name, err)
		}
		if tl.OutputSchema != nil {
			if err := compile(tl.OutputSchema); err != nil {
				t.Errorf("%s output: %v", tl.Name, err)
			}
		}
	}
	want := []string{"files/get", "pets/delete", "pets/get", "pets/create", "pets/list", "put_pets_petId", "search/pets", "tree/get"}
	slices.Sort(want)
	slices.Sort(names)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("tools = %v\nwant %v", names, want)
	}
	readOnly := map[string]bool{}
	for _, tl := range tools {
		readOnly[tl.Name] = tl.ReadOnly
	}
	for name, ro := range map[string]bool{"pets/list": true, "pets/get": true, "pets/create": false, "pets/delete": false, "put_pets_petId": false, "search/pets": true} {
		if readOnly[name] != ro {
			t.Errorf("%s read-only = %v, want %v", name, readOnly[name], ro)
		}
	}
}

func TestPetsSchemas(t *testing.T) {
	p := petsProvider(t, newBackend(t, nil), nil)
	tests := []struct{ tool, schema string }{
		// Authorization is host-side: never a parameter.
		{"pets/list", `{"properties":{"X-Request-Id":{"type":"string"},"limit":{"maximum":100,"type":"integer"},"tag":{"items":{"type":"string"},"type":"array"}},"type":"object"}`},
		// allOf merged; the body field "name" clashes with the query parameter and becomes body_name; readOnly id dropped; 3.0 exclusiveMinimum.
		{"pets/create", `{"properties":{"age":{"exclusiveMinimum":0,"type":"integer"},"body_name":{"description":"The pet's name.","type":"string"},"name":{"description":"Name clash with a body field","type":"string"},"tag":{"type":["string","null"]}},"required":["body_name"],"type":"object"}`},
		{"pets/get", `{"properties":{"petId":{"description":"The pet's id.","type":"string"}},"required":["petId"],"type":"object"}`},
		// A non-object body goes under "body".
		{"put_pets_petId", `{"properties":{"body":{"description":"The request body.","items":{"type":"string"},"type":"array"},"petId":{"description":"The pet's id.","type":"string"}},"required":["petId"],"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if got := string(toolNamed(t, p, tt.tool).InputSchema); got != tt.schema {
				t.Errorf("schema:\n got %s\nwant %s", got, tt.schema)
			}
		})
	}
	tree := toolNamed(t, p, "tree/get")
	if !strings.Contains(string(tree.OutputSchema), `"children":{"items":{"description":"(recursive Node; not expanded here)"},"type":"array"}`) {
		t.Errorf("cycle not cut with a note: %s", tree.OutputSchema)
	}
	list := toolNamed(t, p, "pets/list")
	if !strings.HasPrefix(string(list.OutputSchema), `{"properties":{"result":{"items":`) {
		t.Errorf("array output not under result: %s", list.OutputSchema)
	}
	if d := list.Description; d != "List pets. Lists the pets of the store, newest first. (GET /pets)" {
		t.Errorf("description = %q", d)
	}
}

func TestPetsDiagnostics(t *testing.T) {
	p := petsProvider(t, newBackend(t, nil), nil)
	var got []string
	for _, d := range p.Diagnostics() {
		got = append(got, d.Status+" "+d.Item+": "+d.Reason)
	}
	want := []string{
		"ok testdata/pets.yaml: 8 operations as tools under " + p.base.String() + ", 4 skipped",
		`skipped GET /broken: broken/get: parameter "q": $ref "#/components/schemas/Missing" does not resolve (no such schema in components)`,
		`skipped GET /external: external/get: parameter "q": $ref "other.yaml#/components/schemas/X" is external (only references inside the document are followed)`,
		`skipped GET /loop: loop/get: $ref "#/components/parameters/LoopA" is a cycle of references`,
		`skipped GET /zdup: duplicate tool name "pets/get" (already used by GET /pets/{petId}); give one of them another operationId`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics:\n got %q\nwant %q", got, want)
	}
}

func TestIncludeExclude(t *testing.T) {
	b := newBackend(t, nil)
	tests := []struct {
		include, exclude []string
		want             []string
	}{
		{[]string{"pets/*"}, nil, []string{"pets/create", "pets/delete", "pets/get", "pets/list"}},
		{[]string{"pets"}, []string{"pets/delete", "*_*"}, []string{"pets/create", "pets/get", "pets/list"}}, // a tag; fallback names excluded
		{nil, []string{"pets", "pets/*", "*_*", "tree/*", "files/*"}, []string{"search/pets"}},
		{[]string{"search"}, nil, []string{"search/pets"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.include, ",")+"-"+strings.Join(tt.exclude, ","), func(t *testing.T) {
			p := petsProvider(t, b, func(o *Options) { o.Include, o.Exclude = tt.include, tt.exclude })
			tools, _ := p.Tools(context.Background())
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			if !reflect.DeepEqual(names, tt.want) {
				t.Errorf("tools = %v, want %v", names, tt.want)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	b := newBackend(t, nil)
	p := petsProvider(t, b, func(o *Options) {
		o.Auth = &Auth{Bearer: "s3cret-token"}
		o.Headers = map[string]string{"X-Client": "agent-tools"}
	})
	tests := []struct {
		tool, args string
		want       seen
		ctype      string
	}{
		{"pets/list", `{"limit":5,"tag":["a b","c"],"X-Request-Id":"r1"}`, seen{Method: "GET", Path: "/v1/pets", Query: "limit=5&tag=a+b&tag=c"}, ""},
		{"pets/get", `{"petId":"fido the 2nd"}`, seen{Method: "GET", Path: "/v1/pets/fido%20the%202nd"}, ""},
		{"pets/create", `{"name":"q","body_name":"Rex","age":3,"tag":null}`, seen{Method: "POST", Path: "/v1/pets", Query: "name=q", Body: `{"age":3,"name":"Rex","tag":null}`}, "application/json"},
		{"put_pets_petId", `{"petId":"7","body":["x","y"]}`, seen{Method: "PUT", Path: "/v1/pets/7", Body: `["x","y"]`}, "application/json"},
		{"search/pets", `{"q":"good dog&co"}`, seen{Method: "POST", Path: "/v1/search", Body: `q=good+dog%26co`}, "application/x-www-form-urlencoded"},
		{"pets/delete", `{"petId":"7"}`, seen{Method: "DELETE", Path: "/v1/pets/7"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := call(t, p, tt.tool, tt.args)
			if err != nil || res.IsError {
				t.Fatalf("call = %+v, %v", res, err)
			}
			got := b.last(t)
			if got.Method != tt.want.Method || got.Path != tt.want.Path || got.Query != tt.want.Query || got.Body != tt.want.Body {
				t.Errorf("request = %s %s ?%s %s\n want %s %s ?%s %s", got.Method, got.Path, got.Query, got.Body, tt.want.Method, tt.want.Path, tt.want.Query, tt.want.Body)
			}
			if ct := got.Header.Get("Content-Type"); ct != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", ct, tt.ctype)
			}
			if a := got.Header.Get("Authorization"); a != "Bearer s3cret-token" {
				t.Errorf("Authorization = %q", a)
			}
			if x := got.Header.Get("X-Client"); x != "agent-tools" {
				t.Errorf("X-Client = %q", x)
			}
		})
	}
	if h := b.requests()[0].Header.Get("X-Request-Id"); h != "r1" {
		t.Errorf("header parameter = %q", h)
	}
}

func TestStaticAuth(t *testing.T) {
	tests := []struct {
		auth   Auth
		header string
		want   string
	}{
		{Auth{Header: map[string]string{"X-Api-Key": "k-123456"}}, "X-Api-Key", "k-123456"},
		{Auth{Basic: &BasicAuth{User: "ann", Password: "pw-secret"}}, "Authorization", "Basic YW5uOnB3LXNlY3JldA=="},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			b := newBackend(t, nil)
			p := petsProvider(t, b, func(o *Options) { o.Auth = &tt.auth })
			if _, err := call(t, p, "pets/list", `{}`); err != nil {
				t.Fatal(err)
			}
			if got := b.last(t).Header.Get(tt.header); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.header, got, tt.want)
			}
			if !slices.Contains(p.Secrets(), tt.want) {
				t.Errorf("Secrets() = %q lacks the value sent", p.Secrets())
			}
		})
	}
}

func TestResults(t *testing.T) {
	tests := []struct {
		name  string
		reply func(w http.ResponseWriter, r *http.Request)
		tool  string
		text  string
		strct any
	}{
		{"json object", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"id":"1","n":12345678901234567890}`)
		}, "pets/get", "{\n \"id\": \"1\",\n \"n\": 12345678901234567890\n}", map[string]any{"id": "1", "n": json.Number("12345678901234567890")}},
		{"json array", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[1,2]`)
		}, "pets/get", "[\n 1,\n 2\n]", map[string]any{"result": []any{json.Number("1"), json.Number("2")}}},
		{"text", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "hello")
		}, "search/pets", "hello", nil},
		{"binary", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0, 0xff})
		}, "files/get", "GET /files/x.png answered HTTP 200 OK: binary content (image/png, 6 bytes), not shown", map[string]any{"status": 200, "content_type": "image/png", "size": 6, "truncated": false}},
		{"no content", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) },
			"pets/delete", "DELETE /pets/1 answered HTTP 204 No Content (no body)", map[string]any{"status": 204}},
	}
	args := map[string]string{"pets/get": `{"petId":"1"}`, "pets/delete": `{"petId":"1"}`, "search/pets": `{}`, "files/get": `{"name":"x.png"}`}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := petsProvider(t, newBackend(t, tt.reply), nil)
			res, err := call(t, p, tt.tool, args[tt.tool])
			if err != nil || res.IsError {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if res.Text != tt.text {
				t.Errorf("text = %q, want %q", res.Text, tt.text)
			}
			if !reflect.DeepEqual(res.Structured, tt.strct) {
				t.Errorf("structured = %#v, want %#v", res.Structured, tt.strct)
			}
		})
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		status int
		hint   string
	}{
		{401, "credentials"}, {403, "credentials"}, {404, "check the path parameters"}, {422, "fix the named fields"}, {400, "fix the named fields"}, {500, "failed on its side"}, {503, "failed on its side"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			p := petsProvider(t, newBackend(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, `{"message":"nope","echo":"`+r.Header.Get("Authorization")+`"}`)
			}), func(o *Options) { o.Auth = &Auth{Bearer: "tok-abcdef"} })
			res, err := call(t, p, "pets/get", `{"petId":"1"}`)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Details["status"] != tt.status || !strings.Contains(res.Details["hint"].(string), tt.hint) {
				t.Fatalf("result = %+v", res)
			}
			ex := res.Details["body_excerpt"].(string)
			if !strings.Contains(ex, `"message":"nope"`) || strings.Contains(ex, "tok-abcdef") || strings.Contains(res.Text, "tok-abcdef") {
				t.Errorf("excerpt %q (secret must be scrubbed)", ex)
			}
			e := pipelineEnvelope(res)
			if !strings.Contains(e, `"code":"BACKEND_ERROR"`) || !strings.Contains(e, `"status":`) {
				t.Errorf("envelope = %s", e)
			}
		})
	}
}

// pipelineEnvelope renders a tool error the way the pipeline does.
func pipelineEnvelope(res *provider.Result) string {
	e := toolerr.New(toolerr.BackendError, "", "the tool reported an error")
	for k, v := range res.Details {
		e.With(k, v)
	}
	return e.JSON()
}

func TestBadArguments(t *testing.T) {
	b := newBackend(t, nil)
	p := petsProvider(t, b, nil)
	tests := []struct{ tool, args, want string }{
		{"pets/get", `{"petId":"../admin"}`, `path parameter "petId" contains a slash`},
		{"pets/get", `{"petId":".."}`, `path parameter "petId" is ..`},
		{"pets/get", `{"petId":"%2e%2e"}`, "encoded slash"},
		{"pets/get", `{"petId":"https://evil.example/x"}`, "contains a slash"},
		{"pets/get", `{"petId":"a?b=1"}`, `contains '?'`},
		{"pets/get", `{"petId":"a\nb"}`, "control character"},
		{"pets/get", `{"petId":"a\u0000b"}`, "control character"},
		{"pets/get", `{}`, `path parameter "petId" is missing`},
		{"pets/get", `{"petId":"1","Authorization":"Bearer x"}`, `unknown argument "Authorization"`},
		{"pets/get", `[1]`, "not a JSON object"},
		{"pets/list", `{"X-Request-Id":"a\r\nX-Evil: 1"}`, `header parameter "X-Request-Id" holds a line break or NUL`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, err := call(t, p, tt.tool, tt.args)
			te, ok := toolerr.As(err)
			if !ok || te.Code != toolerr.InvalidArguments || !strings.Contains(te.Message, tt.want) {
				t.Fatalf("err = %v, want INVALID_ARGUMENTS with %q", err, tt.want)
			}
		})
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("the backend got %d requests for refused calls", n)
	}
}

func TestRedirects(t *testing.T) {
	elsewhere := newBackend(t, nil)
	b := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/pets/inside":
			http.Redirect(w, r, "/v1/pets/moved", http.StatusFound)
		case "/v1/pets/outside":
			http.Redirect(w, r, elsewhere.URL+"/steal?x=1", http.StatusFound)
		case "/v1/pets/up":
			http.Redirect(w, r, "/admin", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"at":"`+r.URL.Path+`"}`)
		}
	})
	p := petsProvider(t, b, func(o *Options) { o.Auth = &Auth{Bearer: "tok-abcdef"} })
	res, err := call(t, p, "pets/get", `{"petId":"inside"}`)
	if err != nil || res.IsError || res.Structured.(map[string]any)["at"] != "/v1/pets/moved" {
		t.Fatalf("redirect inside the base URL: %+v, %v", res, err)
	}
	for _, id := range []string{"outside", "up"} {
		res, err = call(t, p, "pets/get", `{"petId":"`+id+`"}`)
		if err != nil || !res.IsError || !strings.Contains(res.Text, "outside the base URL is not followed") || res.Details["status"] != 302 {
			t.Fatalf("redirect %s: %+v, %v", id, res, err)
		}
	}
	if n := len(elsewhere.requests()); n != 0 {
		t.Errorf("the other server got %d requests", n)
	}
}

func TestHugeBodyCapped(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	p := petsProvider(t, newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 20 {
			io.WriteString(w, big)
		}
	}), func(o *Options) { o.MaxBody = 1000 })
	res, err := call(t, p, "search/pets", `{}`)
	if err != nil || res.IsError {
		t.Fatal(res, err)
	}
	if !strings.HasPrefix(res.Text, strings.Repeat("x", 1000)+"\n[answer truncated at 1000 bytes") {
		t.Errorf("text = %.80q… (%d)", res.Text, len(res.Text))
	}
	// A long download reports progress.
	p.opts.MaxBody = 4 << 20
	var reports []string
	var last float64
	ctx := provider.WithProgress(context.Background(), func(done, total float64, msg string) {
		if done <= last || !strings.HasPrefix(msg, "received ") {
			t.Errorf("progress %v %q after %v", done, msg, last)
		}
		last = done
		reports = append(reports, msg)
	})
	res, err = p.Call(ctx, catalog.Tool{Name: "search/pets"}, nil)
	if err != nil || len(res.Text) < 4<<20 || len(reports) < 3 || len(reports) > 4 {
		t.Errorf("progress = %q", reports)
	}
}

func TestTimeout(t *testing.T) {
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	p := petsProvider(t, newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), nil)
	defer close(release)
	// A server that never answers: the call's deadline ends it (the
	// pipeline maps this to TIMEOUT).
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Call(ctx, catalog.Tool{Name: "pets/list"}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	// Cancelled by the client while in flight.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { <-arrived; <-arrived; cancel() }()
	_, err = p.Call(ctx, catalog.Tool{Name: "pets/list"}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
}

func TestUnreachable(t *testing.T) {
	b := newBackend(t, nil)
	url := b.URL
	b.Close()
	p := New(Options{Header: provider.Header{ID: "pets"}, Spec: "testdata/pets.yaml", BaseURL: url})
	_, err := call(t, p, "pets/list", `{}`)
	te, ok := toolerr.As(err)
	if !ok || te.Code != toolerr.BackendError || !strings.Contains(te.Message, "GET /pets: ") {
		t.Fatalf("err = %v", err)
	}
}

// TestOpenAPI31 loads a 3.1 document (type arrays, a boolean schema, a
// numeric exclusive bound) and compiles every schema.
func TestOpenAPI31(t *testing.T) {
	p := New(Options{Header: provider.Header{ID: "tasks"}, Spec: "../../../examples/tasks.openapi.yaml"})
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if err := compile(tl.InputSchema); err != nil {
			t.Errorf("%s: %v", tl.Name, err)
		}
		if tl.OutputSchema != nil {
			if err := compile(tl.OutputSchema); err != nil {
				t.Errorf("%s output: %v", tl.Name, err)
			}
		}
	}
	if got := string(toolNamed(t, p, "create").InputSchema); got != `{"properties":{"due":{"format":"date","type":["string","null"]},"title":{"minLength":1,"type":"string"}},"required":["title"],"type":"object"}` {
		t.Errorf("create schema = %s", got)
	}
	doc, err := parseDocument("x", []byte(`{"openapi":"3.1.0","paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{"any":true,"none":false,"n":{"type":"number","exclusiveMinimum":0}}}}}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, ts, diags := buildOperations("x", doc, selection{})
	if len(ts) != 1 || len(diags) != 0 {
		t.Fatalf("tools %v diags %v", ts, diags)
	}
	if got := string(ts[0].InputSchema); got != `{"properties":{"any":{},"n":{"exclusiveMinimum":0,"type":"number"},"none":{"not":{}}},"type":"object"}` {
		t.Errorf("3.1 schema = %s", got)
	}
	if err := compile(ts[0].InputSchema); err != nil {
		t.Error(err)
	}
}
