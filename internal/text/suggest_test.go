package text

import (
	"slices"
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	keys := []string{"command", "args", "env", "timeout", "Cwd"}
	tests := []struct {
		s, want string
	}{
		{"comand", "command"},  // a deletion
		{"COMMAND", "command"}, // case does not matter, the candidate is returned as spelled
		{"timeuot", "timeout"}, // a transposition is one edit
		{"cdw", "Cwd"},         // case ignored in the candidate too
		{"argz", "args"},
		{"ev", "env"},       // one edit in two letters: half the length
		{"xy", ""},          // two edits in two letters: too short to guess
		{"a", ""},           // nothing is half of one letter away
		{"", ""},            // nothing to match
		{"commandline", ""}, // four edits away
		{"zzzzzz", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.s, keys); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	// Ties go to the first candidate, in the caller's order.
	if got := Suggest("bat", []string{"cat", "hat"}); got != "cat" {
		t.Errorf("tie: %q, want the first candidate", got)
	}
	if got := Suggest("bat", []string{"hat", "cat"}); got != "hat" {
		t.Errorf("tie: %q, want the first candidate", got)
	}
	// A nearer candidate later in the list wins.
	if got := Suggest("deploy", []string{"deplo", "deploy"}); got != "deploy" {
		t.Errorf("nearest: %q", got)
	}
	if got := Suggest("x", nil); got != "" {
		t.Errorf("no candidates: %q", got)
	}
}

func TestSuggestions(t *testing.T) {
	names := []string{"gh_list_issues", "gh_list_pulls", "gh_get_issue", "fs_read", "deploy"}
	tests := []struct {
		name string
		want []string
	}{
		{"gh_list_isues", []string{"gh_list_issues", "gh_list_pulls"}}, // nearest first
		{"GH_LIST_ISSUES", []string{"gh_list_issues", "gh_get_issue"}}, // case does not matter
		{"gh_lsit_pulls", []string{"gh_list_pulls"}},                   // a transposition is one edit
		{"issues", []string{"gh_list_issues"}},                         // containment
		{"deploy", []string{"deploy"}},
		{"zz", []string{}},
		{"xyzzy_unrelated", []string{}},
	}
	for _, tt := range tests {
		if got := Suggestions(tt.name, names, 3); !slices.Equal(got, tt.want) {
			t.Errorf("Suggestions(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Suggestions("gh_list", names, 1); len(got) != 1 {
		t.Errorf("n bounds the suggestions: %q", got)
	}
	if got := Suggestions("x", nil, 3); got == nil || len(got) != 0 {
		t.Errorf("no candidates: %#v, want an empty list", got)
	}
	// Equal distances are ordered by name, whatever the candidates' order.
	if got := Suggestions("bat", []string{"hat", "cat"}, 3); !slices.Equal(got, []string{"cat", "hat"}) {
		t.Errorf("ties: %q", got)
	}
}

func TestFirstLine(t *testing.T) {
	tests := []struct {
		s, want string
	}{
		{"", ""},
		{"one", "one"},
		{"  one  ", "one"},
		{"one\ntwo", "one"},
		{"one \r\ntwo", "one"},
		{"one\rtwo", "one"},
		{"\n\n  \t\n  first  \nsecond", "first"},
		{" \n\t\r\n ", ""},
		{"日本語\nx", "日本語"},
	}
	for _, tt := range tests {
		if got := FirstLine(tt.s); got != tt.want {
			t.Errorf("FirstLine(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func FuzzSuggest(f *testing.F) {
	for _, s := range []string{"", "comand", "ARGZ", "日本", "a\xffb"} {
		f.Add(s, "command", "args")
	}
	f.Fuzz(func(t *testing.T, s, c1, c2 string) {
		if len(s) > 64 || len(c1) > 64 || len(c2) > 64 {
			return // Distance's band is tested on its own
		}
		cands := []string{c1, c2}
		got := Suggest(s, cands)
		if got == "" {
			return
		}
		if !slices.Contains(cands, got) {
			t.Fatalf("Suggest(%q, %q) = %q is no candidate", s, cands, got)
		}
		d := Distance(strings.ToLower(s), strings.ToLower(got), 2)
		if d > 2 || d*2 > len(s) {
			t.Fatalf("Suggest(%q, %q) = %q at distance %d", s, cands, got, d)
		}
		for _, c := range cands {
			if Distance(strings.ToLower(s), strings.ToLower(c), 2) < d {
				t.Fatalf("Suggest(%q, %q) = %q, but %q is nearer", s, cands, got, c)
			}
		}
		for _, n := range Suggestions(s, cands, 2) {
			if !slices.Contains(cands, n) {
				t.Fatalf("Suggestions(%q, %q) returned %q", s, cands, n)
			}
		}
	})
}

func FuzzFirstLine(f *testing.F) {
	for _, s := range []string{"", "a\nb", " \r\n x ", "日本\r語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := FirstLine(s)
		if strings.ContainsAny(got, "\n\r") || got != strings.TrimSpace(got) {
			t.Fatalf("FirstLine(%q) = %q is not one trimmed line", s, got)
		}
		if !strings.Contains(s, got) {
			t.Fatalf("FirstLine(%q) = %q is not part of it", s, got)
		}
		if got == "" && strings.TrimSpace(s) != "" {
			t.Fatalf("FirstLine(%q) is empty", s)
		}
	})
}
