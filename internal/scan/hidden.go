package scan

import "fmt"

// charRules find characters a person reading a definition cannot see but a
// model reads: Unicode tag characters (which spell hidden ASCII text),
// bidirectional controls (which reorder what is shown), zero-width ones.
var charRules = []Rule{
	{ID: "tag-characters", Severity: High,
		What: "Unicode tag characters (U+E0000–U+E007F) or supplementary variation selectors (U+E0100–U+E01EF): invisible text a model reads",
		Hit:  "Adds numbers.\U000E0049\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065",
		Miss: "Adds numbers (émoji 😀 and accents are fine)."},
	{ID: "bidi-control", Severity: High,
		What: "bidirectional override or isolate controls (U+202A–U+202E, U+2066–U+2069): text shown in another order than it is read",
		Hit:  "Deletes the file \u202Etxt.exe",
		Miss: "Supprime le fichier indiqué (français, accents)."},
	{ID: "zero-width", Severity: Medium,
		What: "zero-width or invisible formatting characters (U+200B, U+200C, U+2060, U+FEFF inside text, U+180E, U+00AD)",
		Hit:  "ig\u200bnore this",
		Miss: "A family emoji 👨‍👩‍👧 joins with U+200D, which is allowed."},
}

// invisible reports whether r is a character the character rules flag.
func invisible(r rune) bool { return charRule(r) != "" }

func charRule(r rune) string {
	switch {
	case r >= 0xE0000 && r <= 0xE007F, r >= 0xE0100 && r <= 0xE01EF:
		return "tag-characters"
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return "bidi-control"
	case r == 0x200B, r == 0x200C, r == 0x2060, r == 0xFEFF, r == 0x180E, r == 0x00AD:
		return "zero-width"
	}
	return ""
}

// hidden reports each character rule that matches s once, with the first
// place it matched.
func hidden(field, s string) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for i, r := range s {
		id := charRule(r)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		sev := High
		if id == "zero-width" {
			sev = Medium
		}
		f := Finding{Rule: id, Severity: sev, Field: field, Match: excerpt(s, s, i, i+len(string(r)))}
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
