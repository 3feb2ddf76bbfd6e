package scan

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Span is one place in a text where a rule matched: s[From:To] of the text
// given to Spans, in its original bytes (not the normalised text the
// keyword rules read).
type Span struct {
	Rule     string
	Severity Severity
	From, To int
}

// Spans lists where the rules Text runs match s, for a caller that removes
// what they match (the result guard, internal/resultguard): every match of
// each keyword rule (Text stops at a rule's first), in the normalised text,
// in its i/l look-alike reading and with its HTML comments left out, mapped
// back to s; every tag character, bidirectional control and other
// default-ignorable code point the character rules flag; every HTML
// comment; and each base64 run whose decoded text a rule matches (the run,
// under the rules its text breaks). Spans may overlap; they come in no
// particular order. A rule Text reports on s has at least one span, and a
// rule with a span is one Text reports (TestSpansAgreeWithText).
func Spans(s string) []Span { return spansOf(s, true) }

func spansOf(s string, decode bool) []Span {
	v := normalize(s)
	if v.orig == "" {
		return nil
	}
	var out []Span
	if v.mapped() {
		out = hiddenSpans(v.orig, out)
	}
	fd := cues.find(v.text)
	out = v.spans(fd, out)
	if a := v.alt(); a != nil {
		out = a.spans(cues.find(a.text), out)
	}
	if fd.comment {
		out = commentSpans(&v, out)
		if _, stripped := comments("", &v); stripped != nil {
			out = stripped.spans(cues.find(stripped.text), out)
		}
	}
	if decode {
		for k, r := range fd.base64 {
			if k == maxDecoded {
				break
			}
			d := decoded(v.text[r[0]:r[1]])
			if d == "" {
				continue
			}
			from, to := v.span(r[0], r[1])
			var seen []string
			for _, in := range spansOf(d, false) {
				if !slices.Contains(seen, in.Rule) {
					seen = append(seen, in.Rule)
					out = append(out, Span{Rule: in.Rule, Severity: in.Severity, From: from, To: to})
				}
			}
		}
	}
	return out
}

// spans is match for every place each keyword rule matches v.
func (v *view) spans(fd found, out []Span) []Span {
	s := v.text
	for ri := range textRules {
		r := &textRules[ri]
		for _, p := range fd.spots[ri] {
			if r.WordStart && p > 0 && wordByte(s[p-1]) {
				continue
			}
			to := min(len(s), p+window)
			for to < len(s) && s[to]&0xC0 == 0x80 {
				to++
			}
			if loc := r.re.FindStringIndex(lower(s[p:to])); loc != nil {
				from, end := v.span(p+loc[0], p+loc[1])
				out = append(out, Span{Rule: r.ID, Severity: r.Severity, From: from, To: end})
			}
		}
	}
	return out
}

// hiddenSpans is hidden for every character the character rules flag.
func hiddenSpans(s string, out []Span) []Span {
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
		id := charRule(s, i, r, rtl == 1)
		if id == "" {
			continue
		}
		sev := Medium
		for _, cr := range charRules {
			if cr.ID == id {
				sev = cr.Severity
			}
		}
		out = append(out, Span{Rule: id, Severity: sev, From: i, To: i + utf8.RuneLen(r)})
	}
	return out
}

// commentSpans is comments' finding for every comment of v (up to
// maxComments): an unclosed one runs to the end of the text.
func commentSpans(v *view, out []Span) []Span {
	s := v.text
	last := 0
	for n := 0; n < maxComments; n++ {
		i := indexFold(s[last:], "<!--")
		if i < 0 {
			break
		}
		i += last
		end, body := len(s), s[i+4:]
		if j := strings.Index(s[i+4:], "-->"); j >= 0 {
			end, body = i+4+j+3, s[i+4:i+4+j]
		}
		sev := Medium
		if words(body) {
			sev = High
		}
		from, to := v.span(i, end)
		out = append(out, Span{Rule: "html-comment", Severity: sev, From: from, To: to})
		last = end
	}
	return out
}
