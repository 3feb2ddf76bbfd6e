package text

import "testing"

func TestSuggest(t *testing.T) {
	keys := []string{"command", "args", "cwd", "env", "url", "headers"}
	for _, tt := range []struct{ in, want string }{
		{"comand", "command"},
		{"URL", "url"}, // case does not count
		{"ars", "args"},
		{"headres", "headers"},
		{"e", ""},      // one edit is more than half of a one-letter key
		{"zzzzzz", ""}, // nothing close
		{"", ""},
	} {
		if got := Suggest(tt.in, keys); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
