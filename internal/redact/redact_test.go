package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
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
			if !strings.Contains(got, "${") {
				t.Errorf("no ${NAME} in %q", got)
			}
		})
	}
}

func TestNeverPartial(t *testing.T) {
	s := New()
	s.Add("SHORT", "abcdef")
	s.Add("LONG", "abcdefghij")
	if got := s.String("x abcdefghij y abcdef"); got != "x ${LONG} y ${SHORT}" {
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
	if got := s.String("value-one"); got != "${A}" {
		t.Errorf("got %q", got)
	}
}

func TestErrorKeepsChain(t *testing.T) {
	s := New()
	s.Add("TOKEN", "tok-123456")
	err := s.Error(fmt.Errorf("open tok-123456: %w", fs.ErrNotExist))
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "open ${TOKEN}: file does not exist" {
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
	if strings.Count(out, "${TOKEN}") != 7 {
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
	if buf.String() != `{"msg":"${TOKEN}"}`+"\n" {
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
