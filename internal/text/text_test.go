package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdef", 3, "abc…"},
		{"multibyte fits", "héllo", 5, "héllo"},  // 6 bytes, 5 runes
		{"multibyte cut", "日本語のテキスト", 3, "日本語…"}, // never half a character
		{"emoji cut", "👍👍👍", 1, "👍…"},            // 4-byte sequences
		{"zero", "abc", 0, "…"},
		{"negative", "abc", -1, "…"},
		{"empty", "", 0, ""},
		{"invalid bytes count one each", "a\xffb\xfec", 3, "a\xffb…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clip(tt.s, tt.n); got != tt.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
		})
	}
}

// osa is the textbook full-matrix optimal-string-alignment distance, the
// reference Distance is checked against.
func osa(a, b string) int {
	ra, rb := runes(a), runes(b)
	m := make([][]int, len(ra)+1)
	for i := range m {
		m[i] = make([]int, len(rb)+1)
		m[i][0] = i
	}
	for j := range m[0] {
		m[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			m[i][j] = min(m[i-1][j]+1, m[i][j-1]+1, m[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				m[i][j] = min(m[i][j], m[i-2][j-2]+1)
			}
		}
	}
	return m[len(ra)][len(rb)]
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 2, 0},
		{"abc", "abc", 2, 0},
		{"abc", "", 3, 3},
		{"abc", "", 2, 3}, // over the limit: limit+1
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 2, 3},
		{"timeout", "timeuot", 2, 1}, // a transposition is one edit
		{"reqiure_confirm", "require_confirm", 2, 1},
		{"gh_list_issues", "gh_list_issue", 2, 1},
		{"gh_list_issues", "gl_list_pulls", 2, 3},
		{"naïve", "naive", 1, 1}, // runes, not bytes
		{"日本語", "日本", 1, 1},
		{"abc", "abd", 0, 1},
		{"abc", "abc", -5, 0},
		{strings.Repeat("a", 500), strings.Repeat("a", 499) + "b", 2, 1},
		{strings.Repeat("ab", 300), strings.Repeat("ba", 300), 2, 2}, // delete the first a, append one
		{strings.Repeat("ab", 300), strings.Repeat("ba", 300), 1, 2},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b, tt.limit); got != tt.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", clipForLog(tt.a), clipForLog(tt.b), tt.limit, got, tt.want)
		}
	}
}

func clipForLog(s string) string { return Clip(s, 20) }

func TestDistanceMatchesReference(t *testing.T) {
	words := []string{"", "a", "ab", "ba", "abc", "acb", "bca", "timeout", "tiemout", "env", "nev", "envs", "headers", "haeders", "日本語", "本日語", "x\xffy"}
	for _, a := range words {
		for _, b := range words {
			ref := osa(a, b)
			for limit := 0; limit <= 4; limit++ {
				if got, want := Distance(a, b, limit), min(ref, limit+1); got != want {
					t.Errorf("Distance(%q, %q, %d) = %d, want %d", a, b, limit, got, want)
				}
			}
		}
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", "héllo", "日本語", "a\xffb", "👍👍"} {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		got := Clip(s, n)
		body, cut := strings.CutSuffix(got, Ellipsis)
		if got == s {
			cut = false
			body = s
		}
		if !strings.HasPrefix(s, body) {
			t.Fatalf("Clip(%q, %d) = %q is not a prefix", s, n, got)
		}
		if cut && utf8.RuneCountInString(body) != max(n, 0) {
			t.Fatalf("Clip(%q, %d) = %q keeps %d runes", s, n, got, utf8.RuneCountInString(body))
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q split a character", s, n, got)
		}
	})
}

func FuzzDistance(f *testing.F) {
	f.Add("kitten", "sitting", 2)
	f.Add("timeout", "timeuot", 1)
	f.Add("日本語", "本日", 3)
	f.Fuzz(func(t *testing.T, a, b string, limit int) {
		if len(a) > 64 || len(b) > 64 {
			return // the reference is quadratic; the band is tested above
		}
		limit %= 8
		if got, want := Distance(a, b, limit), min(osa(a, b), max(limit, 0)+1); got != want {
			t.Fatalf("Distance(%q, %q, %d) = %d, want %d", a, b, limit, got, want)
		}
		if Distance(a, b, limit) != Distance(b, a, limit) {
			t.Fatalf("Distance(%q, %q) is not symmetric", a, b)
		}
	})
}
