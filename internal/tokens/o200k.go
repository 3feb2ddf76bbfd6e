package tokens

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// The o200k_base pre-tokenizer, written out by hand. tiktoken-go splits a
// text with the encoding's regular expression run by regexp2 (a
// backtracking engine), which was 80% of its time (about 2.5 MB/s); the
// expression is
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n/]*
//	|\s*[\r\n]+
//	|\s+(?!\S)
//	|\s+
//
// and pieces below matches it as regexp2 does, alternative by alternative
// with the same backtracking (o200k_test.go checks it against regexp2 and
// tiktoken-go on a corpus and by fuzzing). \s is unicode.IsSpace, as in
// regexp2.

// upper is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], lower [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func upper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsMark(r) || (unicode.IsLetter(r) && !unicode.IsLower(r))
}

func lower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsMark(r) || (unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsTitle(r))
}

func letter(r rune) bool {
	if r < utf8.RuneSelf {
		return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	return unicode.IsLetter(r)
}

func number(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}

func space(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || ('\t' <= r && r <= '\r')
	}
	return unicode.IsSpace(r)
}

// lead is [^\r\n\p{L}\p{N}], other [^\s\p{L}\p{N}].
func lead(r rune) bool  { return r != '\r' && r != '\n' && !letter(r) && !number(r) }
func other(r rune) bool { return !space(r) && !letter(r) && !number(r) }

// run is the end of the longest run of runes from i for which in holds,
// and how many runes it has (at most limit; limit < 0: no limit).
func run(s string, i int, in func(rune) bool, limit int) (end, n int) {
	for i < len(s) && n != limit {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			break
		}
		i += size
		n++
	}
	return i, n
}

// contraction is the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or 0.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// word1 is the first alternative from q (after the optional lead): upper*
// lower+, upper* giving back what lower+ needs.
func word1(s string, q int) int {
	end, _ := run(s, q, upper, -1)
	for {
		if e, n := run(s, end, lower, -1); n > 0 {
			return e + contraction(s, e)
		}
		if end == q {
			return -1
		}
		_, size := utf8.DecodeLastRuneInString(s[q:end])
		end -= size
	}
}

// word2 is the second alternative from q: upper+ lower*.
func word2(s string, q int) int {
	end, n := run(s, q, upper, -1)
	if n == 0 {
		return -1
	}
	end, _ = run(s, end, lower, -1)
	return end + contraction(s, end)
}

// next is the end of the piece that starts at p.
func next(s string, p int) int {
	r, size := utf8.DecodeRuneInString(s[p:])
	for _, word := range [2]func(string, int) int{word1, word2} {
		if lead(r) {
			if e := word(s, p+size); e >= 0 {
				return e
			}
		}
		if e := word(s, p); e >= 0 {
			return e
		}
	}
	if e, n := run(s, p, number, 3); n > 0 {
		return e
	}
	q := p
	if r == ' ' {
		q++
	}
	if e, n := run(s, q, other, -1); n > 0 {
		for e < len(s) && (s[e] == '\r' || s[e] == '\n' || s[e] == '/') {
			e++
		}
		return e
	}
	e, n := run(s, p, space, -1)
	if n == 0 { // no alternative matches here; the expression always has one
		return p + size
	}
	for i := e - 1; i >= p; i-- { // \s*[\r\n]+: up to the last line break of the run
		if s[i] == '\r' || s[i] == '\n' {
			return i + 1
		}
	}
	if e == len(s) || n == 1 { // \s+(?!\S), else \s+
		return e
	}
	_, last := utf8.DecodeLastRuneInString(s[p:e])
	return e - last
}

// pieces calls f with each piece of s, in order. s must be valid UTF-8.
func pieces(s string, f func(string)) {
	for p := 0; p < len(s); {
		e := next(s, p)
		f(s[p:e])
		p = e
	}
}

// bpe is the number of tokens piece is merged into by ranks: the
// lowest-ranked adjacent pair first, the leftmost of equals, as tiktoken.
func bpe(piece string, ranks map[string]int, parts [][2]int) int {
	if len(piece) <= 1 {
		return len(piece)
	}
	if _, ok := ranks[piece]; ok {
		return 1
	}
	parts = parts[:0]
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, [2]int{i, math.MaxInt})
	}
	rank := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := ranks[piece[parts[i][0]:parts[i+skip+2][0]]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i][1] = rank(i, 0)
	}
	for len(parts) > 1 {
		minRank, minIdx := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i][1] < minRank {
				minRank, minIdx = parts[i][1], i
			}
		}
		if minRank == math.MaxInt {
			break
		}
		i := minIdx
		parts[i][1] = rank(i, 1)
		if i > 0 {
			parts[i-1][1] = rank(i-1, 1)
		}
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	return len(parts) - 1
}
