package openapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agent-tools/agent-tools/internal/provider"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestMalformedDocuments(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"empty", "", "is empty"},
		{"bad json", "{\n  \"openapi\": \"3.0.0\",\n  \"paths\": {,}\n}", "invalid JSON at line 3, column 13"},
		{"bad yaml", "openapi: 3.0.0\npaths: [\n", "invalid YAML: line 2: did not find expected node content"},
		{"swagger 2", `{"swagger":"2.0","paths":{}}`, "is Swagger 2.0; convert it to OpenAPI 3"},
		{"no version", `{"paths":{"/a":{}}}`, `has no "openapi": "3.x" version field (got <nil>)`},
		{"version 2", "openapi: 2.0\npaths: {}\n", `has no "openapi": "3.x" version field (got 2)`},
		{"list", "- a\n", "not an OpenAPI document"},
		{"no paths", "openapi: 3.1.0\ninfo: {title: x, version: '1'}\n", "has no paths"},
		{"wrong types", `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":"x"}}}}`, "malformed OpenAPI: "},
		// 3,000 nested items took kin-openapi 22 s before the depth check.
		{"deep json", deepDoc(3000, false), "nested deeper than 64 levels at line 1, column "},
		{"deep yaml", deepDoc(3000, true), "nested deeper than 64 levels (objects and arrays)"},
		{"just too deep", deepDoc(60, false), "nested deeper than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDocument("doc", []byte(tt.doc))
			var le *LoadError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "openapi document doc: ") {
				t.Fatalf("err = %v, want a LoadError with %q", err, tt.want)
			}
		})
	}
}

// deepDoc is a valid OpenAPI document whose one schema nests n array
// levels of items (2n JSON levels below the schema).
func deepDoc(n int, yamlFlow bool) string {
	schema := strings.Repeat(`{"type":"array","items":`, n) + `{"type":"string"}` + strings.Repeat("}", n)
	doc := `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":` + schema + `}}}}}}}}`
	if yamlFlow {
		return "# YAML\n" + doc + "\n"
	}
	return doc
}

func TestDepthBound(t *testing.T) {
	// Shallow enough: kin-openapi parses it as before.
	if _, err := parseDocument("doc", []byte(deepDoc(25, false))); err != nil {
		t.Fatalf("a 25-level schema is refused: %v", err)
	}
	start := time.Now()
	if _, err := parseDocument("doc", []byte(deepDoc(3000, false))); err == nil {
		t.Fatal("3,000 levels accepted")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing a deep document took %v", d)
	}
	tests := []struct {
		in   string
		want int
	}{
		{`{}`, -1},
		{`[[[]]]`, -1},
		{`[[[[]]]]`, 3},
		{`{"a":"[[[[[[","b":[[1]]}`, -1},
		{`{"a":"\\\"[[[[[","b":{"c":{}}}`, -1},
		{`{"a":{"b":{"c":{"d":1}}}}`, 15},
	}
	for _, tt := range tests {
		if got := tooDeep([]byte(tt.in), 3); got != tt.want {
			t.Errorf("tooDeep(%s, 3) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// FuzzTooDeep: on valid JSON the scan agrees with the depth a decoder sees.
func FuzzTooDeep(f *testing.F) {
	for _, s := range []string{`{}`, `[[["\"["]]]`, `{"a":[{"b":"}}}"}]}`, `"[["`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		depth := valueDepth(v)
		for _, limit := range []int{0, 1, 2, 3, 8} {
			if got := tooDeep(data, limit) >= 0; got != (depth > limit) {
				t.Fatalf("tooDeep(%s, %d) = %v, decoded depth %d", data, limit, got, depth)
			}
		}
	})
}

func valueDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, valueDepth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, valueDepth(e))
		}
		return d + 1
	}
	return 0
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noServer := write("noserver.yaml", "openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths: {/a: {get: {responses: {'200': {description: ok}}}}}\n")
	relative := write("relative.yaml", "openapi: 3.0.0\ninfo: {title: x, version: '1'}\nservers: [{url: /api}]\npaths: {/a: {get: {responses: {'200': {description: ok}}}}}\n")
	variables := write("vars.yaml", "openapi: 3.0.0\ninfo: {title: x, version: '1'}\nservers: [{url: 'https://{host}/v2', variables: {host: {default: api.example.com}}}]\npaths: {/a: {get: {responses: {'200': {description: ok}}}}}\n")
	tests := []struct {
		spec, base, want string
	}{
		{filepath.Join(dir, "missing.yaml"), "", "cannot read: no such file or directory"},
		{noServer, "", `has no servers[0].url; set "baseURL" in the config`},
		{relative, "", `servers[0].url "/api" is relative; set "baseURL" in the config`},
		{noServer, "ftp://x", `base URL "ftp://x" is not an http(s) URL with a host`},
		{noServer, "https://u:p@h/x", `base URL "https://u:***@h/x" must not carry a query, fragment or user info`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			p := New(Options{Header: provider.Header{ID: "x"}, Spec: tt.spec, BaseURL: tt.base})
			err := p.Start(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			d := p.Diagnostics()
			if len(d) != 1 || d[0].Status != "failed" || !strings.Contains(d[0].Reason, tt.want) {
				t.Errorf("diagnostics = %+v", d)
			}
			if _, err := p.Tools(context.Background()); err == nil {
				t.Error("Tools without a document succeeded")
			}
		})
	}
	p := New(Options{Header: provider.Header{ID: "x"}, Spec: variables})
	if err := p.Start(context.Background()); err != nil || p.base.String() != "https://api.example.com/v2" {
		t.Errorf("server variables: %v %v", p.base, err)
	}
}

// TestDocumentFromURL: a URL document is fetched once and cached on disk;
// a second provider reads the cache; an unreachable URL falls back to a
// stale copy with a warning.
func TestDocumentFromURL(t *testing.T) {
	doc, err := os.ReadFile("testdata/pets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var fetches atomic.Int32
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/latest" { // a document URL that redirects
			http.Redirect(w, r, "/openapi.yaml", http.StatusFound)
			return
		}
		if r.URL.Path != "/openapi.yaml" {
			w.WriteHeader(404)
			return
		}
		fetches.Add(1)
		w.Write(doc)
	})
	cache := t.TempDir()
	spec := srv.URL + "/latest"
	for i := range 2 {
		p := New(Options{Header: provider.Header{ID: "pets"}, Spec: spec, BaseURL: srv.URL, CacheDir: cache})
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(p.tools) != 8 {
			t.Fatalf("round %d: %d tools", i, len(p.tools))
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("fetched %d times, want once", n)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "pets-*.doc"))
	if len(files) != 1 {
		t.Fatalf("cache files = %v", files)
	}
	// Stale and unreachable: the cached copy serves, with a warning.
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(files[0], old, old); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	p := New(Options{Header: provider.Header{ID: "pets"}, Spec: spec, BaseURL: "http://127.0.0.1:1", CacheDir: cache})
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := p.Diagnostics()[0]; d.Status != "warning" || !strings.Contains(d.Reason, "unreachable") || !strings.Contains(d.Reason, "using the copy cached at") {
		t.Errorf("diagnostic = %+v", d)
	}
	// No cache, unreachable: a load error that says so.
	p = New(Options{Header: provider.Header{ID: "pets"}, Spec: spec, CacheDir: t.TempDir()})
	if err := p.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "openapi document "+spec+": unreachable: ") {
		t.Errorf("err = %v", err)
	}
}

func TestDocumentURLErrors(t *testing.T) {
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/500":
			w.WriteHeader(500)
		case "/huge":
			w.Write([]byte("openapi: 3.0.0\n"))
			chunk := []byte("# " + strings.Repeat("x", 1<<16) + "\n")
			for range (maxDocument >> 16) + 2 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	})
	for path, want := range map[string]string{"/500": "fetching it answered HTTP 500", "/huge": "larger than 64 MiB"} {
		p := New(Options{Header: provider.Header{ID: "x"}, Spec: srv.URL + path, CacheDir: t.TempDir()})
		if err := p.Start(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", path, err, want)
		}
	}
}

func jwt(exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256"}`)) + "." + enc([]byte(fmt.Sprintf(`{"exp":%d}`, exp.Unix()))) + ".sig"
}

// loginBackend is a stand-in for PocketBase's auth: it issues tokens and
// accepts only the current one.
type loginBackend struct {
	*backend
	logins  atomic.Int32
	current atomic.Value // string
	expiry  time.Duration
	refuse  atomic.Bool // everything answers 401, the login too
}

func newLoginBackend(t *testing.T, expiry time.Duration) *loginBackend {
	lb := &loginBackend{expiry: expiry}
	lb.current.Store("")
	lb.backend = newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if lb.refuse.Load() {
			w.WriteHeader(401)
			return
		}
		if r.URL.Path == "/v1/login" {
			var body map[string]string
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if body["identity"] != "ann@example.com" || body["password"] != "pw-very-secret" {
				w.WriteHeader(400)
				io.WriteString(w, `{"message":"Failed to authenticate.","echo":"`+body["password"]+`"}`)
				return
			}
			n := lb.logins.Add(1)
			tok := jwt(time.Now().Add(lb.expiry))
			tok = fmt.Sprintf("%s%d", tok, n)
			lb.current.Store(tok)
			io.WriteString(w, `{"record":{"id":"u1"},"token":"`+tok+`"}`)
			return
		}
		if r.Header.Get("Authorization") != lb.current.Load().(string) {
			w.WriteHeader(401)
			io.WriteString(w, `{"message":"The request requires valid record authorization token."}`)
			return
		}
		io.WriteString(w, `{"ok":true,"echo":"`+r.Header.Get("Authorization")+`"}`)
	})
	return lb
}

func loginAuth(password string) *Auth {
	empty := ""
	return &Auth{Login: &LoginAuth{Path: "/login", Body: map[string]string{"identity": "ann@example.com", "password": password},
		Token: "/token", Header: "Authorization", Prefix: &empty}}
}

func TestLoginFlow(t *testing.T) {
	lb := newLoginBackend(t, time.Hour)
	p := petsProvider(t, lb.backend, func(o *Options) { o.Auth = loginAuth("pw-very-secret") })
	if lb.logins.Load() != 0 {
		t.Fatal("logged in before the first call")
	}
	for i := range 3 {
		res, err := call(t, p, "pets/list", `{}`)
		if err != nil || res.IsError {
			t.Fatalf("call %d: %+v, %v", i, res, err)
		}
		if strings.Contains(res.Text, lb.current.Load().(string)) {
			t.Errorf("the token reached the result: %s", res.Text)
		}
	}
	if n := lb.logins.Load(); n != 1 {
		t.Errorf("logins = %d, want 1 (the token is reused)", n)
	}
	if s := p.Secrets(); !containsStr(s, lb.current.Load().(string)) || !containsStr(s, "pw-very-secret") {
		t.Errorf("Secrets() lacks the token or the password")
	}
	// The server revokes the token: the next call gets 401, logs in once more and retries.
	lb.current.Store("revoked")
	res, err := call(t, p, "pets/list", `{}`)
	if err != nil || res.IsError {
		t.Fatalf("after revocation: %+v, %v", res, err)
	}
	if n := lb.logins.Load(); n != 2 {
		t.Errorf("logins = %d, want 2", n)
	}
	// A 401 that persists after the new login is an error result, with one retry only.
	before := len(lb.requests())
	lb.current.Store("never")
	lb.refuse.Store(true)
	_, err = call(t, p, "pets/list", `{}`)
	if err == nil || !strings.Contains(err.Error(), "login at /login answered HTTP 401") {
		t.Errorf("err = %v", err)
	}
	if n := len(lb.requests()) - before; n != 2 {
		t.Errorf("%d requests after a refused token, want 2 (the call and one login)", n)
	}
}

func TestLoginExpiry(t *testing.T) {
	lb := newLoginBackend(t, 10*time.Second) // inside the renewal margin: every call logs in again
	p := petsProvider(t, lb.backend, func(o *Options) { o.Auth = loginAuth("pw-very-secret") })
	for range 2 {
		if res, err := call(t, p, "pets/list", `{}`); err != nil || res.IsError {
			t.Fatal(res, err)
		}
	}
	if n := lb.logins.Load(); n != 2 {
		t.Errorf("logins = %d, want 2 (an expiring token is renewed before use)", n)
	}
	if got := jwtExpiry(jwt(time.Unix(2000000000, 0))); got.Unix() != 2000000000 {
		t.Errorf("jwtExpiry = %v", got)
	}
	if !jwtExpiry("opaque-token").IsZero() {
		t.Error("an opaque token has an expiry")
	}
}

func TestLoginRefused(t *testing.T) {
	lb := newLoginBackend(t, time.Hour)
	p := petsProvider(t, lb.backend, func(o *Options) { o.Auth = loginAuth("wrong-password-123") })
	_, err := call(t, p, "pets/list", `{}`)
	if err == nil || !strings.Contains(err.Error(), "PROVIDER_UNAVAILABLE: login at /login answered HTTP 400") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "wrong-password-123") {
		t.Errorf("the password reached the error: %v", err)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzParseDocument: any input is a document or a LoadError, and a parsed
// document always converts into tools with valid JSON schemas.
func FuzzParseDocument(f *testing.F) {
	f.Add([]byte(`{"openapi":"3.0.0","paths":{"/a/{x}":{"get":{"parameters":[{"name":"x","in":"path","schema":{"$ref":"#/components/schemas/S"}}]}}},"components":{"schemas":{"S":{"allOf":[{"$ref":"#/components/schemas/S"}]}}}}`))
	f.Add([]byte("openapi: 3.1.0\npaths:\n  /b:\n    post:\n      requestBody: {content: {application/json: {schema: {type: object, properties: {a: {type: [string, 'null']}}}}}}\n"))
	f.Add([]byte(`{"openapi":"3.0.0","paths":{"/c":{"put":{"requestBody":{"$ref":"#/components/requestBodies/R"}}}},"components":{"requestBodies":{"R":{"$ref":"#/components/requestBodies/R"}}}}`))
	f.Add([]byte(`{"swagger":"2.0"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		doc, err := parseDocument("fuzz", data)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %T is not a LoadError: %v", err, err)
			}
			return
		}
		_, tools, _ := buildOperations("f", doc, selection{})
		for _, tl := range tools {
			if !json.Valid(tl.InputSchema) || tl.OutputSchema != nil && !json.Valid(tl.OutputSchema) {
				t.Fatalf("%s: invalid schema JSON", tl.Name)
			}
		}
	})
}

// TestToolsCache: a converted document is stored; the next start with the
// same document and settings reads it instead of parsing, and calls work
// from it; a changed setting or a corrupt file converts again.
func TestToolsCache(t *testing.T) {
	b := newBackend(t, nil)
	dir := t.TempDir()
	start := func(mod func(*Options)) *Provider {
		return petsProvider(t, b, func(o *Options) {
			o.CacheDir = dir
			if mod != nil {
				mod(o)
			}
		})
	}
	first := start(nil)
	second := start(nil)
	if first.conversions != 1 || second.conversions != 0 {
		t.Fatalf("conversions = %d, %d; want 1, 0", first.conversions, second.conversions)
	}
	t1, _ := first.Tools(context.Background())
	t2, _ := second.Tools(context.Background())
	if !reflect.DeepEqual(t1, t2) || !reflect.DeepEqual(first.Diagnostics(), second.Diagnostics()) || second.Info().Description != "Pet store" {
		t.Errorf("the cached conversion differs")
	}
	if _, err := call(t, second, "pets/create", `{"name":"q","body_name":"Rex","tag":["x"]}`); err != nil {
		t.Fatal(err)
	}
	if got := b.last(t); got.Method != "POST" || got.Path != "/v1/pets" || got.Query != "name=q" || got.Body != `{"name":"Rex","tag":["x"]}` {
		t.Errorf("request from the cached conversion = %+v", got)
	}
	if p := start(func(o *Options) { o.Include = []string{"pets/*"} }); p.conversions != 1 || len(p.tools) != 4 {
		t.Errorf("a changed include used the cache (%d conversions, %d tools)", p.conversions, len(p.tools))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "pets-tools-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files = %v (the stale one should be gone)", files)
	}
	if err := os.WriteFile(files[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := start(func(o *Options) { o.Include = []string{"pets/*"} }); p.conversions != 1 || len(p.tools) != 4 {
		t.Errorf("a corrupt cache was used")
	}
}
