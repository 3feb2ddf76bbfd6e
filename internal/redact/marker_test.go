package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"
)

// markerCases are the kinds of secret the runtime registers, with the name
// each caller passes to Add and the marker docs/secrets.md documents.
var markerCases = []struct{ kind, name, want string }{
	{"variable", "MYKEY", "[redacted: MYKEY]"},
	{"variable written as a reference", "${MYKEY}", "[redacted: MYKEY]"},
	{"keyring reference", "keyring:github/token", "[redacted: keyring:github/token]"},
	{"keyring reference written with ${}", "${keyring:github/token}", "[redacted: keyring:github/token]"},
	{"age reference", "age:secrets.enc.yaml#api.key", "[redacted: age:secrets.enc.yaml#api.key]"},
	{"file reference", "file:/run/secrets/pg-password", "[redacted: file:/run/secrets/pg-password]"},
	{"pass reference", "pass:team/tasks-api", "[redacted: pass:team/tasks-api]"},
	{"cmd reference", "cmd:op-linear", "[redacted: cmd:op-linear]"},
	{"provider login token", "login token", "[redacted: login token]"},
	{"upstream login token", "upstream access token", "[redacted: upstream access token]"},
	{"no name", "", "[redacted]"},
	{"no name, the URL mask", Mask, "[redacted]"},
	{"URL userinfo pair built by Marker", Marker("USER") + ":" + Marker("PASS"), "[redacted: USER]:[redacted: PASS]"},
	{"URL userinfo pair written as references", "${USER}:${PASS}", "[redacted: USER]:[redacted: PASS]"},
	{"URL userinfo with a literal user", "alice:${PASS}", "alice:[redacted: PASS]"},
	{"Windows file path", `file:C:\secrets\api.txt`, "[redacted: file:C:/secrets/api.txt]"},
	{"name with JSON and HTML specials", `file:a"b<c>&'{d}` + "\n", "[redacted: file:a_b_c___(d)_]"},
	{"unterminated reference", "${OOPS", "[redacted: $(OOPS]"},
}

// TestMarkerPerKind: each kind of secret is replaced by the marker
// documented for it, in every encoding the redactor knows, and a redacted
// output never holds "${" (which would read as an interpolation that never
// ran) nor the value.
func TestMarkerPerKind(t *testing.T) {
	for i, c := range markerCases {
		t.Run(c.kind, func(t *testing.T) {
			value := fmt.Sprintf(`cnry%02d-s3cr3t/+&<v>"'=`, i)
			s := New()
			s.Add(c.name, value)
			raw, _ := json.Marshal(value)
			js := string(raw[1 : len(raw)-1])
			b64 := base64.StdEncoding.EncodeToString([]byte(value))
			texts := map[string]string{
				"plain":        "got " + value + " back",
				"query":        "https://h/x?k=" + url.QueryEscape(value),
				"path":         "https://h/" + url.PathEscape(value) + "/y",
				"json":         `{"echo":"` + js + `"}`,
				"json in json": string(mustJSON(t, map[string]string{"text": `{"echo":"` + js + `"}`})),
				"html":         "<p>" + html.EscapeString(value) + "</p>",
				"base64":       "Authorization: Basic " + b64,
			}
			for enc, in := range texts {
				got := s.String(in)
				if strings.Contains(got, "cnry") {
					t.Errorf("%s: the value is left in %q", enc, got)
				}
				if strings.Contains(got, "${") {
					t.Errorf("%s: %q holds ${", enc, got)
				}
				if !strings.Contains(got, c.want) {
					t.Errorf("%s: %q does not hold %q", enc, got, c.want)
				}
			}
		})
	}
}

// The marker is inserted unescaped into JSON: whatever the name, a JSON
// value scrubbed through Any and JSONInto stays JSON and holds the marker.
func TestMarkerKeepsJSONValid(t *testing.T) {
	for i, c := range markerCases {
		value := fmt.Sprintf("json-canary-%02d-value", i)
		s := New()
		s.Add(c.name, value)
		type res struct{ Text string }
		got, ok := s.JSONInto(&res{Text: "echo " + value}).(*res)
		if !ok || got.Text != "echo "+c.want {
			t.Errorf("%s: JSONInto = %#v, want the text %q", c.kind, got, "echo "+c.want)
		}
		m := s.Any(struct{ A []string }{A: []string{value}})
		if b, _ := json.Marshal(m); !strings.Contains(string(b), mustQuote(t, c.want)) {
			t.Errorf("%s: Any = %s", c.kind, b)
		}
	}
}

func TestMarker(t *testing.T) {
	if Marker("MYKEY") != "[redacted: MYKEY]" || Marker("") != Redacted || Redacted != "[redacted]" {
		t.Errorf("Marker(MYKEY) = %q, Marker(\"\") = %q", Marker("MYKEY"), Marker(""))
	}
	for _, c := range markerCases {
		if got := replacement(c.name); got != c.want {
			t.Errorf("%s: replacement(%q) = %q, want %q", c.kind, c.name, got, c.want)
		}
		// Nothing in a marker needs escaping in JSON or HTML.
		if q := mustQuote(t, c.want); q != `"`+c.want+`"` || html.EscapeString(c.want) != c.want {
			t.Errorf("%s: %q is escaped as %s", c.kind, c.want, q)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustQuote(t *testing.T, s string) string { return string(mustJSON(t, s)) }

// FuzzMarker: whatever name a caller passes, the marker never reads as a
// reference and needs no escaping in JSON or HTML.
func FuzzMarker(f *testing.F) {
	for _, c := range markerCases {
		f.Add(c.name)
	}
	f.Add("$${{x}}")
	f.Add("${a}${b")
	f.Add("x\u2028y\xff")
	f.Fuzz(func(t *testing.T, name string) {
		m := replacement(name)
		if strings.Contains(m, "${") || !strings.Contains(m, "[redacted") {
			t.Fatalf("replacement(%q) = %q", name, m)
		}
		b, _ := json.Marshal(m)
		if string(b) != `"`+m+`"` || html.EscapeString(m) != m {
			t.Fatalf("replacement(%q) = %q needs escaping: %s", name, m, b)
		}
	})
}
