package cli

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\nline two\ttab", "plain text\nline two\ttab"},
		{"red \x1b[31mALERT\x1b[0m", `red \x1b[31mALERT\x1b[0m`},
		{"nul\x00byte", `nul\x00byte`},
		{"over\rwrite", `over\x0dwrite`},
		{"bell\a del\x7f", `bell\x07 del\x7f`},
		{"c1 \u009b2J", `c1 \x9b2J`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"bidi \u202eevil", `bidi \u202eevil`},
		{"émoji ✓ 日本", "émoji ✓ 日本"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"a\x1b[2Jb", "\x00\r\n\t", "\xff\xfe", "\u202e", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := printable(s)
		if !utf8.ValidString(out) {
			t.Fatalf("printable(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if needsEscape(r) {
				t.Fatalf("printable(%q) = %q: still holds %U", s, out, r)
			}
		}
		if !strings.ContainsAny(s, "\x00\x1b\r\x7f") && utf8.ValidString(s) && !strings.ContainsFunc(s, needsEscape) && out != s {
			t.Fatalf("printable changed clean text %q to %q", s, out)
		}
	})
}
