package naming

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReadableCanonical(t *testing.T) {
	tests := []struct {
		provider, tool string
		hostLocal      bool
		want           string
		wantErr        error
	}{
		// What the model reads is what the server spells.
		{provider: "fs", tool: "list_directory_with_sizes", want: "fs_list_directory_with_sizes"},
		{provider: "ev", tool: "get-sum", want: "ev_get-sum"},
		{provider: "hub", tool: "Hacker_News_MCP_Server__getCommentTree", want: "hub_Hacker_News_MCP_Server__getCommentTree"},
		{provider: "hub", tool: "Context7_MCP__get-library-docs", want: "hub_Context7_MCP__get-library-docs"},
		{provider: "zed", tool: "zip", want: "zed_zip"},
		// Only characters some model API refuses are rewritten.
		{provider: "gh", tool: "list.repos", want: "gh_list_repos"},
		{provider: "gh", tool: "repos/list", want: "gh_repos_list"},
		{provider: "gh", tool: "a:b c", want: "gh_a_b_c"},
		{provider: "fr", tool: "café", want: "fr_cafue9"},
		{provider: "jp", tool: "検索", want: "jp_u691cu7d22"},
		{provider: "emo", tool: "smile😀", want: "emo_smileu1f600"},
		{provider: "local", tool: "deploy-app", hostLocal: true, want: "deploy-app"},
		{provider: "builtin", tool: "execute_javascript", hostLocal: true, want: "execute_javascript"},
		{provider: "ab", tool: strings.Repeat("a", 200), want: "ab_" + strings.Repeat("a", 200)}, // no length limit
		{provider: "", tool: "x", wantErr: ErrEmpty},
		{provider: "gh", tool: "", wantErr: ErrEmpty},
		{provider: "gh", tool: "a\xffb", wantErr: ErrInvalidUTF8},
	}
	for _, tt := range tests {
		for _, s := range []Scheme{"", Readable} {
			got, err := s.Canonical(tt.provider, tt.tool, tt.hostLocal)
			if tt.wantErr != nil {
				var ne *NameError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &ne) {
					t.Errorf("%q.Canonical(%q, %q) = %q, %v; want %v", s, tt.provider, tt.tool, got, err, tt.wantErr)
				}
				continue
			}
			if err != nil || got != tt.want {
				t.Errorf("%q.Canonical(%q, %q) = %q, %v; want %q", s, tt.provider, tt.tool, got, err, tt.want)
			}
		}
	}
	// Lossless keeps its injective encoding.
	if got, _ := Lossless.Canonical("fs", "list_directory_with_sizes", false); got != "fs_list_directory_with_siz7azes" {
		t.Errorf("lossless = %q", got)
	}
}

func TestParseScheme(t *testing.T) {
	for in, want := range map[string]Scheme{"": Readable, "readable": Readable, "lossless": Lossless} {
		if got, err := ParseScheme(in); err != nil || got != want {
			t.Errorf("ParseScheme(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"Readable", "z", "flat", " lossless"} {
		if _, err := ParseScheme(bad); err == nil {
			t.Errorf("ParseScheme(%q) accepted", bad)
		}
	}
	if Readable.Other() != Lossless || Lossless.Other() != Readable || Scheme("").Other() != Lossless {
		t.Error("Other is wrong")
	}
}

var readableCharset = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

func FuzzReadableComponent(f *testing.F) {
	for _, s := range []string{"", "list_repos", "get-sum", "a.b", "café", "😀", "A B/C:D", "\x00", "u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("invalid UTF-8 never reaches the rule: Canonical rejects it")
		}
		got := ReadableComponent(s)
		if !readableCharset.MatchString(got) {
			t.Fatalf("ReadableComponent(%q) = %q: outside A–Z a–z 0–9 _ -", s, got)
		}
		if again := ReadableComponent(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
		}
		if readableCharset.MatchString(s) && got != s {
			t.Fatalf("a safe name %q was rewritten to %q", s, got)
		}
		if utf8.RuneCountInString(got) < utf8.RuneCountInString(s) {
			t.Fatalf("%q lost characters: %q", s, got)
		}
	})
}
