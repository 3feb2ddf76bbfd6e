package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

const canary = "s3cr3t-Canary+/=&?x"

func TestStringReplacesEveryForm(t *testing.T) {
	s := New()
	s.Add("KEY", canary)
	s.Add("USER_PASS", "alice:pa55word")
	cases := []struct{ name, in string }{
		{"plain", "value " + canary + " end"},
		{"query", "http://h/mcp?key=" + url.QueryEscape(canary)},
		{"path", "http://h/" + url.PathEscape(canary) + "/x"},
		{"json", `{"k":"` + strings.ReplaceAll(canary, "&", `\u0026`) + `"}`},
		{"base64 alone", base64.StdEncoding.EncodeToString([]byte(canary))},
		{"base64url alone", base64.URLEncoding.EncodeToString([]byte(canary))},
		{"base64 inside, offset 1", base64.StdEncoding.EncodeToString([]byte("a" + canary + "zz"))},
		{"base64 inside, offset 2", base64.StdEncoding.EncodeToString([]byte("ab" + canary + "z"))},
		{"basic auth", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pa55word"))},
		{"twice", canary + canary},
	}
	secrets := []string{canary, url.QueryEscape(canary), "pa55word", "alice:pa55word",
		base64.StdEncoding.EncodeToString([]byte(canary))[:12]}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.String(c.in)
			if got == c.in {
				t.Fatalf("nothing replaced in %q", c.in)
			}
			for _, sec := range secrets {
				if strings.Contains(got, sec) {
					t.Errorf("%q still holds %q", got, sec)
				}
			}
			if !strings.Contains(got, "[redacted: KEY]") && !strings.Contains(got, "[redacted: USER_PASS]") {
				t.Errorf("no [redacted: NAME] in %q", got)
			}
			if strings.Contains(got, "${") {
				t.Errorf("a marker that reads as a reference in %q", got)
			}
		})
	}
}

func TestNeverPartial(t *testing.T) {
	s := New()
	s.Add("SHORT", "abcdef")
	s.Add("LONG", "abcdefghij")
	if got := s.String("x abcdefghij y abcdef"); got != "x [redacted: LONG] y [redacted: SHORT]" {
		t.Errorf("got %q", got)
	}
}

func TestShortValuesIgnored(t *testing.T) {
	s := New()
	for _, v := range []string{"", "C", "en_US", "8080"} {
		s.Add("V", v)
	}
	if s.Len() != 0 {
		t.Errorf("%d forms registered for values under %d chars", s.Len(), MinLen)
	}
	if got := s.String("port 8080 lang en_US"); got != "port 8080 lang en_US" {
		t.Errorf("changed: %q", got)
	}
}

func TestNamesAndFirstWins(t *testing.T) {
	s := New()
	s.Add("${A}", "value-one")
	s.Add("B", "value-one")
	if got := s.String("value-one"); got != "[redacted: A]" {
		t.Errorf("got %q", got)
	}
}

func TestErrorKeepsChain(t *testing.T) {
	s := New()
	s.Add("TOKEN", "tok-123456")
	err := s.Error(fmt.Errorf("open tok-123456: %w", fs.ErrNotExist))
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "open [redacted: TOKEN]: file does not exist" {
		t.Errorf("got %v", err)
	}
	if s.Error(nil) != nil {
		t.Error("nil error must stay nil")
	}
}

type stringer struct{}

func (stringer) String() string { return "str tok-123456" }

func TestHandler(t *testing.T) {
	s := New()
	s.Add("TOKEN", "tok-123456")
	var buf bytes.Buffer
	log := slog.New(s.Handler(slog.NewTextHandler(&buf, nil)))
	log = log.With("pre", "with tok-123456")
	log.Info("msg tok-123456", "err", errors.New("e tok-123456"), "s", stringer{},
		slog.Group("g", "inner", "tok-123456"), "list", []string{"tok-123456"}, "m", map[string]string{"k": "tok-123456"})
	out := buf.String()
	if strings.Contains(out, "tok-123456") {
		t.Errorf("log holds the secret: %s", out)
	}
	if strings.Count(out, "[redacted: TOKEN]") != 7 {
		t.Errorf("want 7 replacements: %s", out)
	}
}

func TestWriter(t *testing.T) {
	s := New()
	s.Add("TOKEN", "tok-123456")
	var buf bytes.Buffer
	w := s.Writer(&buf)
	in := []byte(`{"msg":"tok-123456"}` + "\n")
	if n, err := w.Write(in); err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if buf.String() != `{"msg":"[redacted: TOKEN]"}`+"\n" {
		t.Errorf("got %q", buf.String())
	}
}

func TestEmptySetIsIdentity(t *testing.T) {
	s := New()
	b := []byte("abc")
	if got := s.Bytes(b); &got[0] != &b[0] || s.String("abc") != "abc" {
		t.Error("an empty set must not copy")
	}
}

func BenchmarkString(b *testing.B) {
	s := New()
	for i := range 50 {
		s.Add(fmt.Sprintf("V%d", i), fmt.Sprintf("secret-value-%03d", i))
	}
	text := strings.Repeat("an ordinary tool result line without secrets\n", 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = s.String(text)
	}
}

// encodeJSON is value as a JSON string literal, HTML-escaped or not.
func encodeJSON(t *testing.T, v any, html bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// A secret holding " \ < > & / leaked once it sat in JSON
// inside JSON (cnry\u0026mcp\u003ckey…), or in JSON written with "\/".
func TestJSONInsideJSON(t *testing.T) {
	const sec = `cnry&mcpQ7<key>"x\y/z'=é`
	s := New()
	s.Add("MCP_KEY", sec)
	php := func(j string) string { return strings.ReplaceAll(j, "/", `\/`) }
	cases := map[string]string{}
	for _, h1 := range []bool{true, false} {
		one := encodeJSON(t, map[string]string{"k": sec}, h1)
		cases[fmt.Sprintf("one level html=%v", h1)] = one
		cases[fmt.Sprintf("one level html=%v slashes", h1)] = php(one)
		for _, h2 := range []bool{true, false} {
			two := encodeJSON(t, map[string]string{"text": one}, h2)
			cases[fmt.Sprintf("two levels html=%v,%v", h1, h2)] = two
			cases[fmt.Sprintf("two levels html=%v,%v slashes", h1, h2)] = encodeJSON(t, map[string]string{"text": php(one)}, h2)
			for _, h3 := range []bool{true, false} {
				cases[fmt.Sprintf("three levels html=%v,%v,%v", h1, h2, h3)] = encodeJSON(t, map[string]string{"r": two}, h3)
			}
		}
	}
	cases["gson"] = `{"k":"cnry\u0026mcpQ7\u003ckey\u003e\"x\\y/z\u0027\u003dé"}`
	cases["python ascii"] = `{"k": "cnry&mcpQ7<key>\"x\\y/z'=\u00e9"}`
	cases["base64 in php json"] = `{"b":"` + php(base64.StdEncoding.EncodeToString([]byte("Basic:"+sec))) + `"}`
	cases["url"] = "https://h/?k=" + url.QueryEscape(sec)
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got := s.String(in)
			if strings.Contains(got, "mcpQ7") || !strings.Contains(got, "[redacted: MCP_KEY]") {
				t.Errorf("%s\n → %s", in, got)
			}
		})
	}
}

// BenchmarkStringSpecial is BenchmarkString with secrets that hold JSON and
// HTML special characters (each has a dozen registered forms) and a text
// that holds one of them.
func BenchmarkStringSpecial(b *testing.B) {
	s := New()
	for i := range 50 {
		s.Add(fmt.Sprintf("V%d", i), fmt.Sprintf(`sec&<ret>"\/-%03d`, i))
	}
	text := strings.Repeat("an ordinary tool result line without secrets\n", 100) + `{"k":"sec\u0026\u003cret\u003e\"\\/-007"}`
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = s.String(text)
	}
}

// FuzzStringMatchesReplacer: the pre-filter never changes the outcome of
// the plain replacement over all forms.
func FuzzStringMatchesReplacer(f *testing.F) {
	f.Add("x secret-value-007 y", "secret-value-007")
	f.Add("abcdef", "abcdef")
	f.Add(`{"k":"a\u0026b\u003cc"}`, "a&b<c-1")
	f.Fuzz(func(t *testing.T, text, secret string) {
		s := New()
		s.Add("A", secret)
		s.Add("B", "fixed-secret-"+secret)
		s.Add("C", "short1")
		r := s.rep.Load()
		if r == nil {
			return
		}
		want := r.rep.Replace(text)
		if got := s.String(text); got != want {
			t.Fatalf("String(%q) = %q, want %q", text, got, want)
		}
		if got := string(s.Bytes([]byte(text))); got != want {
			t.Fatalf("Bytes(%q) = %q, want %q", text, got, want)
		}
	})
}

// The console's pages are html/template output: text and attribute
// escaping of a secret are forms too.
func TestHTMLForms(t *testing.T) {
	const sec = `cnry+html&<Zq7>"'`
	s := New()
	s.Add("HTML_KEY", sec)
	var b strings.Builder
	tmpl := template.Must(template.New("p").Parse(`<p title="{{.}}">{{.}}</p><input value={{.}}>`))
	if err := tmpl.Execute(&b, sec); err != nil {
		t.Fatal(err)
	}
	if got := s.String(b.String()); strings.Contains(got, "Zq7") || strings.Count(got, "[redacted: HTML_KEY]") != 3 {
		t.Errorf("%s\n → %s", b.String(), got)
	}
}
