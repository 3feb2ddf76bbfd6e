package scan

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// charRules find characters a person reading a definition cannot see but a
// model reads: Unicode tag characters (which spell hidden ASCII text),
// bidirectional controls (which reorder what is shown), and every other
// default-ignorable code point (zero-width characters and joiners,
// variation selectors, invisible operators, Hangul fillers…) outside the
// places a script or an emoji needs one. Every one of them is dropped
// before the keyword rules read the text (normalize.go), so that one
// inside a word hides no cue.
var charRules = []Rule{
	{ID: "tag-characters", Severity: High,
		What: "Unicode tag characters and the other default-ignorable code points of U+E0000–U+E0FFF (supplementary variation selectors U+E0100–U+E01EF): invisible text a model reads (an emoji subdivision flag is allowed)",
		Hit:  "Adds numbers.\U000E0049\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065",
		Miss: "Adds numbers (émoji 😀, the flag 🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F and accents are fine)."},
	{ID: "bidi-control", Severity: High,
		What: "bidirectional override or isolate controls (U+202A–U+202E, U+2066–U+2069): text shown in another order than it is read",
		Hit:  "Deletes the file \u202Etxt.exe",
		Miss: "Supprime le fichier indiqué (français, accents)."},
	{ID: "zero-width", Severity: Medium,
		What: "any other default-ignorable code point: zero-width characters and joiners (U+200B–U+200D, U+2060, U+FEFF inside text, U+180E, U+00AD), variation selectors outside emoji, invisible operators U+2061–U+2064, bidi marks in text with no right-to-left letter, Hangul fillers (U+3164, U+FFA0, U+115F, U+1160), U+034F, U+17B4–U+17B5… (U+200D and U+200C between emoji or between letters of a script that joins, a variation selector after an emoji, are allowed)",
		Hit:  "read id\u200D_rsa",
		Miss: "A family emoji 👨\u200d👩\u200d👧 joins with U+200D, ⚠\ufe0f takes U+FE0F, and می\u200cخواهم takes U+200C: allowed."},
}

// invisible reports whether r is a character excerpts show as U+XXXX.
func invisible(r rune) bool { return ignorable(r) }

// charRule is the character rule r at s[i:] breaks ("" for none), given the
// characters around it.
func charRule(s string, i int, r rune, rtl bool) string {
	if !ignorable(r) {
		return ""
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
	switch {
	case r >= 0xE0000 && r <= 0xE0FFF:
		if subdivisionFlag(s, i) {
			return ""
		}
		return "tag-characters"
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return "bidi-control"
	case r == 0x200D:
		if emojiLike(prev) && emojiLike(next) || joining(prev) && joining(next) {
			return ""
		}
	case r == 0x200C:
		if joining(prev) && joining(next) {
			return ""
		}
	case r == 0xFE0E || r == 0xFE0F:
		if emojiLike(prev) && prev != 0xFE0F || (prev == '#' || prev == '*' || '0' <= prev && prev <= '9') && next == 0x20E3 {
			return ""
		}
	case r == 0x200E || r == 0x200F || r == 0x061C:
		if rtl {
			return ""
		}
	case r >= 0x180B && r <= 0x180F && r != 0x180E:
		if unicode.Is(unicode.Mongolian, prev) {
			return ""
		}
	case r == 0xFEFF:
		if i == 0 {
			return "" // a byte order mark
		}
	}
	return "zero-width"
}

// emojiLike: a pictographic character, or one that continues an emoji
// (U+FE0F, the keycap mark, a skin tone is in the first range).
func emojiLike(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2B00 && r <= 0x2BFF,
		r >= 0x2190 && r <= 0x21FF, r >= 0x2300 && r <= 0x23FF, r >= 0x25A0 && r <= 0x25FF,
		r == 0xA9, r == 0xAE, r == 0x203C, r == 0x2049, r == 0x2122, r == 0x2139, r == 0x24C2,
		r == 0x2934, r == 0x2935, r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299,
		r == 0xFE0F, r == 0x20E3:
		return true
	}
	return false
}

// joiningScripts write U+200C and U+200D between their letters.
var joiningScripts = []*unicode.RangeTable{unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Hebrew, unicode.Thaana,
	unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya, unicode.Tamil, unicode.Telugu,
	unicode.Kannada, unicode.Malayalam, unicode.Sinhala, unicode.Tibetan, unicode.Myanmar, unicode.Khmer, unicode.Mongolian}

func joining(r rune) bool {
	return r >= 0x0590 && unicode.In(r, unicode.L, unicode.M) && unicode.In(r, joiningScripts...)
}

// rtlLetters reports whether s has a letter of a right-to-left script
// (where the bidi marks U+200E, U+200F and U+061C are part of writing).
func rtlLetters(s string) bool {
	for _, r := range s {
		if r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFEFC {
			if unicode.IsLetter(r) {
				return true
			}
		}
	}
	return false
}

// subdivisionFlag: s[i:] is in an emoji tag sequence, U+1F3F4 then tag
// letters or digits then U+E007F (🏴 England, Scotland, Wales).
func subdivisionFlag(s string, i int) bool {
	j := i
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		if r < 0xE0030 || r > 0xE007A {
			break
		}
		j -= n
	}
	if r, _ := utf8.DecodeLastRuneInString(s[:j]); r != 0x1F3F4 {
		return false
	}
	k, tags := j, 0
	for k < len(s) {
		r, n := utf8.DecodeRuneInString(s[k:])
		k += n
		switch {
		case r == 0xE007F:
			return tags >= 2 && tags <= 6
		case r >= 0xE0030 && r <= 0xE0039, r >= 0xE0061 && r <= 0xE007A:
			tags++
		default:
			return false
		}
	}
	return false
}

// hidden reports each character rule that matches s once, with the first
// place it matched.
func hidden(field, s string) []Finding {
	var out []Finding
	var seen [3]bool
	rtl := -1
	for i, r := range s {
		if !ignorable(r) {
			continue
		}
		if rtl < 0 {
			rtl = 0
			if rtlLetters(s) {
				rtl = 1
			}
		}
		k := 2 // the rule r would break, charRules' index: a rule found once is not looked for again
		switch {
		case r >= 0xE0000:
			k = 0
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			k = 1
		}
		if seen[k] {
			continue
		}
		id := charRule(s, i, r, rtl == 1)
		if id == "" {
			continue
		}
		seen[k] = true
		f := Finding{Rule: id, Severity: charRules[k].Severity, Field: field, Match: excerpt(s, s, i, i+utf8.RuneLen(r))}
		if id == "tag-characters" {
			if t := tagText(s); t != "" {
				f.Match += fmt.Sprintf(" (hidden text: %q)", t)
			}
		}
		out = append(out, f)
	}
	return out
}

// tagText decodes the ASCII that tag characters spell.
func tagText(s string) string {
	var b []byte
	for _, r := range s {
		if r > 0xE0000 && r < 0xE007F {
			b = append(b, byte(r-0xE0000))
		}
	}
	if len(b) > 200 {
		b = append(b[:200], "…"...)
	}
	return string(b)
}
