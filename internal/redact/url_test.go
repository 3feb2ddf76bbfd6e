package redact

import (
	"strings"
	"testing"
)

func TestMaskURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://api.example.org/openapi.json?access_token=cnry-tok-1&v=2", "https://api.example.org/openapi.json?access_token=***&v=***"},
		{"http://alice:pa55word@127.0.0.1:8080/mcp", "http://alice:***@127.0.0.1:8080/mcp"},
		{"http://alice@127.0.0.1/mcp", "http://alice@127.0.0.1/mcp"},
		{"https://h/x?cnry-bare-token", "https://h/x?***"},
		{"https://h/x#frag-secret", "https://h/x"},
		{"./specs/api.yaml", "./specs/api.yaml"},
		{"http://a:b@h/%zz?k=v", "http://h/***"},
		{"redis://:cnry-redis-pw@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"},
	}
	for _, c := range cases {
		if got := MaskURL(c.in); got != c.want {
			t.Errorf("MaskURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzMaskURL(f *testing.F) {
	for _, s := range []string{"https://u:p@h/x?a=b#c", "http://h?tok", "x://[::1]:80/?=&=", "http://%zz@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out := MaskURL(raw)
		if !strings.Contains(raw, "://") {
			if out != raw {
				t.Fatalf("a non-URL changed: %q → %q", raw, out)
			}
			return
		}
		// Whatever followed "?" or the password is never kept verbatim.
		if i := strings.Index(raw, "?"); i >= 0 && !strings.Contains(raw[:i], "#") {
			for _, p := range strings.Split(raw[i+1:], "&") {
				_, v, _ := strings.Cut(p, "=")
				if len(v) >= 8 && !strings.ContainsAny(v, "#%+*") && strings.Contains(out, "="+v) {
					t.Fatalf("query value %q kept in %q", v, out)
				}
			}
		}
	})
}
