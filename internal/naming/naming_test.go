package naming

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEncodeComponent(t *testing.T) {
	tests := []struct {
		in         string
		underscore bool
		want       string
	}{
		{"", true, ""},
		{"abc", true, "abc"},
		{"list_repos", true, "list_repos"},
		{"list_repos", false, "listz5fzrepos"},
		{"gh-cli", false, "ghz2dzcli"},
		{"list.repos", true, "listz2ezrepos"},
		{"z", true, "z7az"},
		{"zz", false, "z7azz7az"},
		{"zip", true, "z7azip"},
		{"y9", true, "y9"},
		{"A", true, "z41z"},
		{"getRepo", true, "getz52zepo"},
		{"é", true, "ze9z"},
		{"naïve", true, "naz efz ve"},
		{"日本", true, "z65e5zz672cz"},
		{"😀", true, "z1f600z"},
		{"\x00", true, "z0z"},
		{"\x00\x01", false, "z0zz1z"},
		{" ", true, "z20z"},
		{"a/b", true, "az2fzb"},
		{"\U0010FFFF", true, "z10ffffz"},
	}
	for _, tt := range tests {
		want := strings.ReplaceAll(tt.want, " ", "") // allow spacing in vectors
		if got := EncodeComponent(tt.in, tt.underscore); got != want {
			t.Errorf("EncodeComponent(%q, %v) = %q, want %q", tt.in, tt.underscore, got, want)
		}
		back, err := decode(want, tt.underscore)
		if err != nil || back != tt.in {
			t.Errorf("decode(%q, %v) = %q, %v; want %q", want, tt.underscore, back, err, tt.in)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in         string
		underscore bool
		wantSub    string
	}{
		{"z", true, "unterminated escape"},
		{"z2d", true, "unterminated escape"},
		{"abcz41", true, "unterminated escape"},
		{"zz", true, "empty escape"},
		{"zgz", true, "'z' must start an escape"},
		{"z4gz", true, "non-hex character 'g'"},
		{"z2Dz", true, "uppercase hex digit 'D'"},
		{"z02dz", true, "leading zeros"},
		{"z00z", true, "leading zeros"},
		{"z0az", true, "leading zeros"},
		{"z1000000z", true, "longer than 6 hex digits"},
		{"z110000z", true, "past U+10FFFF"},
		{"zd800z", true, "surrogate"},
		{"zdfffz", true, "surrogate"},
		{"z61z", true, `encodes 'a', which is written raw`},
		{"z30z", true, `encodes '0', which is written raw`},
		{"z5fz", true, `encodes '_', which is written raw`},
		{"a_b", false, `character '_' must be escaped`},
		{"A", true, `character 'A' must be escaped`},
		{"a-b", true, `character '-' must be escaped`},
		{"é", true, `character 'é' must be escaped`},
		{"\xff", true, "invalid byte 0xff"},
	}
	for _, tt := range tests {
		got, err := decode(tt.in, tt.underscore)
		if err == nil {
			t.Errorf("decode(%q, %v) = %q, want error", tt.in, tt.underscore, got)
			continue
		}
		if !errors.Is(err, errMalformed) || !strings.Contains(err.Error(), tt.wantSub) {
			t.Errorf("decode(%q, %v) error = %v, want errMalformed containing %q", tt.in, tt.underscore, err, tt.wantSub)
		}
	}
	// z5fz is the canonical provider-side escape of '_'.
	if got, err := decode("z5fz", false); err != nil || got != "_" {
		t.Errorf(`decode("z5fz", false) = %q, %v`, got, err)
	}
	if got, err := decode("a_b", true); err != nil || got != "a_b" {
		t.Errorf(`decode("a_b", true) = %q, %v`, got, err)
	}
}

func TestLossless(t *testing.T) {
	long := strings.Repeat("a", 61)
	tests := []struct {
		provider, tool string
		hostLocal      bool
		want           string
		wantErr        error
		wantMsg        string
	}{
		{provider: "gh-cli", tool: "list.repos", want: "ghz2dzcli_listz2ezrepos"},
		{provider: "gh", tool: "list_repos", want: "gh_list_repos"},
		{provider: "gh_x", tool: "y", want: "ghz5fzx_y"},
		{provider: "zed", tool: "zip", want: "z7azed_z7azip"},
		{provider: "GH", tool: "getRepo", want: "z47zz48z_getz52zepo"},
		{provider: "fr", tool: "café", want: "fr_cafze9z"},
		{provider: "emo", tool: "smile😀", want: "emo_smilez1f600z"},
		{provider: "local", tool: "deploy-app", hostLocal: true, want: "deployz2dzapp"},
		{provider: "builtin", tool: "execute_javascript", hostLocal: true, want: "execute_javascript"},
		{provider: "", tool: "x", hostLocal: true, want: "x"},
		{provider: "ab", tool: long, want: "ab_" + long},
		{provider: "", tool: "x", wantErr: ErrEmpty, wantMsg: `tool "x" of provider "": empty provider id`},
		{provider: "gh", tool: "", wantErr: ErrEmpty, wantMsg: `tool "" of provider "gh": empty tool name`},
		{provider: "local", tool: "", hostLocal: true, wantErr: ErrEmpty, wantMsg: `tool "" of provider "local": empty tool name`},
		{provider: "abc", tool: long, want: "abc_" + long}, // no length limit on identity
		{provider: "gh", tool: "Aaaaaaaaa", hostLocal: false, want: "gh_z41zaaaaaaaa"},
		{provider: "gh", tool: "a\xffb", wantErr: ErrInvalidUTF8, wantMsg: `tool "a\xffb" of provider "gh": tool name is not valid UTF-8`},
		{provider: "g\xff", tool: "x", wantErr: ErrInvalidUTF8, wantMsg: `tool "x" of provider "g\xff": provider id is not valid UTF-8`},
	}
	for _, tt := range tests {
		got, err := LosslessName(tt.provider, tt.tool, tt.hostLocal)
		if tt.wantErr == nil {
			if err != nil || got != tt.want {
				t.Errorf("LosslessName(%q, %q, %v) = %q, %v; want %q", tt.provider, tt.tool, tt.hostLocal, got, err, tt.want)
			}
			continue
		}
		var ne *NameError
		if !errors.Is(err, tt.wantErr) || !errors.As(err, &ne) || err.Error() != tt.wantMsg {
			t.Errorf("LosslessName(%q, %q, %v) = %q, %v; want %v %q", tt.provider, tt.tool, tt.hostLocal, got, err, tt.wantErr, tt.wantMsg)
		}
	}
}

func TestSplit(t *testing.T) {
	good := []struct{ in, p, t string }{
		{"ghz2dzcli_listz2ezrepos", "gh-cli", "list.repos"},
		{"gh_list_repos", "gh", "list_repos"},
		{"ghz5fzx_y", "gh_x", "y"},
		{"a__", "a", "_"},
	}
	for _, tt := range good {
		p, tool, err := split(tt.in)
		if err != nil || p != tt.p || tool != tt.t {
			t.Errorf("split(%q) = %q, %q, %v; want %q, %q", tt.in, p, tool, err, tt.p, tt.t)
		}
		if c, err := LosslessName(p, tool, false); err != nil || c != tt.in {
			t.Errorf("Lossless(split(%q)) = %q, %v", tt.in, c, err)
		}
	}
	for _, bad := range []string{"", "bare", "_x", "gh_", "gh-x_y", "gh_z61z", "GH_x"} {
		if p, tool, err := split(bad); err == nil || !errors.Is(err, errMalformed) {
			t.Errorf("split(%q) = %q, %q, %v; want errMalformed", bad, p, tool, err)
		}
	}
}

var charset = regexp.MustCompile(`^(?:[a-y0-9_]|z[0-9a-f]+z)*$`)

func FuzzEncodeComponent(f *testing.F) {
	for _, s := range []string{"", "gh-cli", "list.repos", "z", "zz7az", "A_b", "é", "😀", "\x00", "_", "\U0010FFFF"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, underscore bool) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		enc := EncodeComponent(s, underscore)
		if !charset.MatchString(enc) {
			t.Fatalf("EncodeComponent(%q) = %q: outside the charset", s, enc)
		}
		if !underscore && strings.Contains(enc, "_") {
			t.Fatalf("provider encoding %q of %q contains '_'", enc, s)
		}
		dec, err := decode(enc, underscore)
		if err != nil || dec != s {
			t.Fatalf("decode(EncodeComponent(%q)) = %q, %v", s, dec, err)
		}
		if underscore {
			if dec, err := decode(enc, true); err != nil || dec != s {
				t.Fatalf("decode(%q, true) = %q, %v", enc, dec, err)
			}
		}
	})
}

func FuzzDecodeComponent(f *testing.F) {
	for _, s := range []string{"", "abc", "z7az", "z2dz", "z", "zz", "z02dz", "zd800z", "z110000z", "z61z", "a_b", "z5fz", "Z", "z1f600z", "z2Dz"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, underscore bool) {
		dec, err := decode(s, underscore)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("decode(%q) error %v does not wrap errMalformed", s, err)
			}
			return
		}
		if !utf8.ValidString(dec) {
			t.Fatalf("decode(%q) = %q: invalid UTF-8", s, dec)
		}
		if enc := EncodeComponent(dec, underscore); enc != s {
			t.Fatalf("EncodeComponent(decode(%q)) = %q", s, enc)
		}
		p, tool, err := split(s)
		if err == nil {
			if c, err := LosslessName(p, tool, false); err == nil && c != s {
				t.Fatalf("Lossless(split(%q)) = %q", s, c)
			}
		}
	})
}
