package openapi

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestBuildPath(t *testing.T) {
	tests := []struct {
		tmpl   string
		vals   map[string]string
		want   string
		errSub string
	}{
		{"/repos/{owner}/{repo}", map[string]string{"owner": "octo", "repo": "hello world"}, "/repos/octo/hello%20world", ""},
		{"/repos/{owner}/{repo}/compare/{basehead}", map[string]string{"owner": "o", "repo": "r", "basehead": "main...topic"}, "/repos/o/r/compare/main...topic", ""},
		{"/files/{name}.json", map[string]string{"name": "a:b@c"}, "/files/a:b@c.json", ""},
		{"/users/{id}", map[string]string{"id": "ü"}, "/users/%C3%BC", ""},
		{"/users/{id}", map[string]string{"id": "../admin"}, "", "contains a slash"},
		{"/users/{id}", map[string]string{"id": ".."}, "", "is .."},
		{"/users/{id}", map[string]string{"id": "."}, "", "is ."},
		{"/users/{a}{b}", map[string]string{"a": "..x", "b": ".y"}, "/users/..x.y", ""},
		{"/users/{a}.{b}", map[string]string{"a": "x", "b": "y"}, "/users/x.y", ""},
		{"/users/.{b}", map[string]string{"b": ".."}, "", "is .."},
		{"/users/{id}", map[string]string{"id": "a%2Fb"}, "", "encoded slash"},
		{"/users/{id}", map[string]string{"id": "%2e%2e"}, "", "encoded slash"},
		{"/users/{id}", map[string]string{"id": "a\\b"}, "", "contains a slash"},
		{"/users/{id}", map[string]string{"id": "x?admin=1"}, "", `contains '?'`},
		{"/users/{id}", map[string]string{"id": "x#frag"}, "", `contains '#'`},
		{"/users/{id}", map[string]string{"id": "http:"}, "/users/http:", ""},
		{"/users/{id}", map[string]string{"id": "https://evil.example"}, "", "contains a slash"},
		{"/users/{id}", map[string]string{"id": "a\nb"}, "", "control character"},
		{"/users/{id}", map[string]string{"id": "a\x00b"}, "", "control character"},
		{"/users/{id}", map[string]string{"id": ""}, "", "is empty"},
		{"/users/{id}", map[string]string{}, "", `"id" is missing`},
		{"/users/{id", map[string]string{"id": "x"}, "", "unclosed {"},
		{"users/{id}", map[string]string{"id": "x"}, "", "does not start with /"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl+"="+strings.Join(values(tt.vals), ","), func(t *testing.T) {
			got, err := buildPath(tt.tmpl, lookupIn(tt.vals))
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("buildPath = %q, %v; want error with %q", got, err, tt.errSub)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("buildPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// FuzzBuildPath checks the invariant that matters: whatever the value, a
// built path has exactly the template's segments, the parameter's segment
// decodes back to the value, and no segment is "." or "..".
func FuzzBuildPath(f *testing.F) {
	for _, s := range []string{"octo", "..", "a/b", "%2F", "main...x", "ü", "a b", "?x", "%", "%%2f", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if len(v) > 256 {
			return
		}
		got, err := buildPath("/repos/{owner}/x", lookupIn(map[string]string{"owner": v}))
		if err != nil {
			return
		}
		segs := strings.Split(got, "/")
		if len(segs) != 4 || segs[0] != "" || segs[1] != "repos" || segs[3] != "x" {
			t.Fatalf("value %q built %q: segments changed", v, got)
		}
		dec, err := url.PathUnescape(segs[2])
		if err != nil || dec != v {
			t.Fatalf("value %q built segment %q decoding to %q (%v)", v, segs[2], dec, err)
		}
		if dec == "." || dec == ".." {
			t.Fatalf("value %q built a traversal segment", v)
		}
		u, err := url.Parse("http://h/base" + got)
		if err != nil || u.Host != "h" || !strings.HasPrefix(u.EscapedPath(), "/base/repos/") || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("value %q built %q which parses to %+v (%v)", v, got, u, err)
		}
	})
}

// Redirects: the check once compared escaped prefixes, so an encoded or
// literal dot segment walked out of the base with the credentials.
func TestUnderBaseNormalises(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/api")
	tests := []struct {
		target string
		want   bool
	}{
		{"http://127.0.0.1:8080/api", true},
		{"http://127.0.0.1:8080/api/", true},
		{"http://127.0.0.1:8080/api/users/1", true},
		{"http://127.0.0.1:8080/api/a/../b", true},
		{"http://127.0.0.1:8080/api/users/main...topic", true},
		{"http://127.0.0.1:8080/api/%2e%2e/admin", false},
		{"http://127.0.0.1:8080/api/%2E%2E/admin", false},
		{"http://127.0.0.1:8080/api/..%2fadmin", false},
		{"http://127.0.0.1:8080/api/..%2Fadmin", false},
		{"http://127.0.0.1:8080/api/../admin", false},
		{"http://127.0.0.1:8080/api/./../admin", false},
		{"http://127.0.0.1:8080/api/%252e%252e/admin", false},
		{"http://127.0.0.1:8080/api/..%5cadmin", false},
		{"http://127.0.0.1:8080/api/..;/admin", false},
		{"http://127.0.0.1:8080/api/x/..%2f..%2fadmin", false},
		{"http://127.0.0.1:8080/api//../../admin", false},
		{"http://127.0.0.1:8080/apix", false},
		{"http://127.0.0.1:8080/admin", false},
		{"http://127.0.0.1:8080/", false},
		{"http://127.0.0.1:9090/api/x", false},
		{"https://127.0.0.1:8080/api/x", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := underBase(base, u); got != tt.want {
			t.Errorf("underBase(%s) = %v, want %v", tt.target, got, tt.want)
		}
	}
	root, _ := url.Parse("http://h")
	if u, _ := url.Parse("http://h/%2e%2e/x"); !underBase(root, u) {
		t.Error("everything on the host is under a root base")
	}
}

// FuzzUnderBase: whatever the path, a URL judged under the base resolves,
// after decoding its escapes and removing dot segments, to a path under it.
func FuzzUnderBase(f *testing.F) {
	for _, s := range []string{"/api/x", "/api/%2e%2e/admin", "/api/..%2fadmin", "/api/../x", "/api/..;/x", "/api//..//..//x"} {
		f.Add(s)
	}
	base, _ := url.Parse("http://h/api")
	f.Fuzz(func(t *testing.T, p string) {
		u, err := url.Parse("http://h" + p)
		if err != nil || u.Host != "h" || !underBase(base, u) {
			return
		}
		dec, err := url.PathUnescape(u.EscapedPath())
		if err != nil {
			return
		}
		for range 3 {
			if d, err := url.PathUnescape(dec); err == nil {
				dec = d
			}
		}
		dec = strings.ReplaceAll(dec, "\\", "/")
		if c := path.Clean("/" + dec); c != "/api" && !strings.HasPrefix(c, "/api/") {
			t.Fatalf("%q judged under /api but reads as %q", p, c)
		}
	})
}
