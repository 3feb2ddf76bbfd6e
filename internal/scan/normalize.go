package scan

import (
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// The keyword rules read a field's text the way a model reads it, not the
// way its bytes spell it: a definition that writes "Ignore all previous
// instructions" with a no-break space, a Cyrillic о, a zero-width joiner
// inside "id_rsa" or a fullwidth "ｉｇｎｏｒｅ" says the same thing to a model
// as the plain text does. Before the rules run, a text that is not all
// ASCII is normalised (an ASCII text is read as it is, at no cost):
//
//  1. every default-ignorable code point (Unicode's Default_Ignorable_Code_Point:
//     zero-width characters and joiners, variation selectors, U+2061–2064,
//     tag characters, bidirectional controls, Hangul fillers…) is dropped
//     (the character rules in hidden.go flag them first);
//  2. NFKC (golang.org/x/text/unicode/norm): fullwidth, mathematical,
//     circled and other compatibility forms become the plain letters;
//  3. a character whose Unicode TR39 confusables skeleton is ASCII is
//     replaced by that skeleton in lower case (Greek and Cyrillic
//     look-alikes of Latin letters, slashes, dashes, "×"…), a Latin small
//     capital by its letter, and a letter with diacritics by its base
//     letter; a combining mark after ASCII is dropped. The table is Unicode's
//     confusables.txt as github.com/mtibben/confusables ships it (Unicode
//     13.0), looked up one character at a time and remembered;
//  4. any Unicode space becomes an ASCII space, a run of spaces one space,
//     and a Unicode line or paragraph separator a newline.
//
// The normalised text is for matching only: a finding quotes the original
// text (with its hidden characters shown as <U+XXXX>) and says what it was
// read as. Cues are found with runs of ASCII white space folded (cues.go),
// so ASCII text needs no copy.

// Normalize is the text the keyword rules read for s (see above): s itself
// when it is all ASCII. It is idempotent and its result holds no
// default-ignorable code point and is valid UTF-8.
func Normalize(s string) string { return normalize(s).text }

// A view is a text the rules read and where each of its bytes came from in
// the original text.
type view struct {
	orig string
	text string
	// marks map text to orig (nil: text is orig): text[i] came from
	// orig[m.o+i-m.t] for the last mark m with m.t <= i. A mark is set only
	// where that stops holding, so a text with a few changed characters has
	// a few marks.
	marks []mark
	// amb are the offsets in text of letters read from a look-alike whose
	// skeleton is "i" or "l" (Cyrillic і and ӏ, Greek ι, "ǀ"): the two are
	// each other's look-alikes, so the rules also read the text with each
	// of them swapped (alt).
	amb []int32
}

type mark struct{ t, o int32 }

// addMark records that the byte at text offset i came from orig offset at.
func addMark(ms []mark, i, at int) []mark {
	if n := len(ms); n > 0 && int(ms[n-1].o)+i-int(ms[n-1].t) == at {
		return ms
	}
	return append(ms, mark{int32(i), int32(at)})
}

func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if (uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56)&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// mapped reports whether v.text is not v.orig as it is.
func (v *view) mapped() bool { return v.marks != nil }

// off is the offset in v.orig that v.text[i] came from (len(v.orig) for
// len(v.text)).
func (v *view) off(i int) int {
	if v.marks == nil {
		return i
	}
	if i >= len(v.text) {
		return len(v.orig)
	}
	lo, hi := 0, len(v.marks) // the last mark with t <= i
	for hi-lo > 1 {
		if m := (lo + hi) / 2; int(v.marks[m].t) <= i {
			lo = m
		} else {
			hi = m
		}
	}
	m := v.marks[lo]
	return int(m.o) + i - int(m.t)
}

// span is the original text's range that text[a:b] was read from.
func (v *view) span(a, b int) (int, int) {
	if v.marks == nil {
		return a, b
	}
	from := v.off(a)
	k := b
	if b > a {
		last := v.off(b - 1)
		for k < len(v.text) && v.off(k) <= last {
			k++ // text[b-1] and text[b] came from one source character
		}
	}
	return from, v.off(k)
}

// alt is the view with the i/l look-alikes swapped (nil when there are none).
func (v *view) alt() *view {
	if len(v.amb) == 0 {
		return nil
	}
	b := []byte(v.text)
	for _, i := range v.amb {
		if b[i] == 'i' {
			b[i] = 'l'
		} else {
			b[i] = 'i'
		}
	}
	return &view{orig: v.orig, text: string(b), marks: v.marks}
}

// normalize builds the view the rules read for s.
func normalize(s string) view {
	if isASCII(s) {
		return view{orig: s, text: s}
	}
	// 1. Drop the default-ignorable code points (and spell invalid UTF-8
	// as U+FFFD, so that what follows reads valid text); coff maps clean
	// to s (nil: clean is s).
	clean := s
	var coff []int32
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if ignorable(r) || r == utf8.RuneError && n == 1 {
			clean, coff = dropIgnorable(s)
			break
		}
		i += n
	}
	nb := normBuilder{out: make([]byte, 0, len(clean)+8), marks: make([]mark, 0, 8), coff: coff}
	// 2. NFKC: the spans NFKC leaves as they are (all of an ASCII text
	// but its non-ASCII characters, most often) are read as they are;
	// the rest one segment at a time (a segment NFKC changes maps, all
	// of it, to its start).
	it := iters.Get().(*norm.Iter)
	defer iters.Put(it)
	it.InitString(norm.NFKC, clean)
	for pos := 0; pos < len(clean); {
		end := pos + norm.NFKC.QuickSpanString(clean[pos:])
		nb.read(clean[pos:end], pos, true)
		if pos = end; pos == len(clean) {
			break
		}
		if _, err := it.Seek(int64(pos), io.SeekStart); err != nil {
			panic(err) // pos is within clean
		}
		seg, end := nextSegment(it, pos)
		if end <= pos {
			// Not reached (nextSegment always advances); read one
			// character as it is rather than loop.
			_, n := utf8.DecodeRuneInString(clean[pos:])
			seg, end = clean[pos:pos+n], pos+n
		}
		nb.read(seg, pos, seg == clean[pos:end])
		pos = end
	}
	if len(nb.marks) == 0 {
		nb.marks = append(nb.marks, mark{0, 0}) // an empty text: mapped all the same
	}
	return view{orig: s, text: string(nb.out), marks: nb.marks, amb: nb.amb}
}

// maxSegmentParts bounds the calls nextSegment makes for one character:
// NFKC of a character is at most 18 characters (U+FDFA), each at most one
// part.
const maxSegmentParts = 64

// nextSegment is the NFKC of the segment of the text it reads that starts
// at pos, and the offset the segment ends at. Iter.Next returns the NFKC
// of a character that decomposes to more than one starter ("ǅ" to "D" and
// "ž", "ﬁ" to "f" and "i") a starter at a time, with Pos not moving until
// the last one: the parts are joined, so that the caller moves on. The
// offset is pos when the iterator does not move within maxSegmentParts
// calls (which it always does).
func nextSegment(it *norm.Iter, pos int) (string, int) {
	seg := it.Next()
	if it.Pos() != pos || it.Done() {
		return string(seg), it.Pos()
	}
	buf := append([]byte(nil), seg...) // Next reuses its buffer
	for range maxSegmentParts {
		buf = append(buf, it.Next()...)
		if it.Pos() != pos || it.Done() {
			break
		}
	}
	return string(buf), it.Pos()
}

// normBuilder writes a view's text (steps 3 and 4 of the normalisation).
type normBuilder struct {
	out                  []byte
	marks                []mark
	amb                  []int32
	coff                 []int32 // the cleaned text's offsets in the original (nil: the same)
	lastASCII, lastSpace bool
}

// src is the original offset of the cleaned text's byte i.
func (nb *normBuilder) src(i int) int {
	if nb.coff == nil {
		return i
	}
	return int(nb.coff[i])
}

// read writes NFKC text seg, which came from the cleaned text at from:
// byte for byte when same (seg is the cleaned text there), else all of it
// from there.
func (nb *normBuilder) read(seg string, from int, same bool) {
	at := nb.src(from)
	for j := 0; j < len(seg); {
		if same {
			at = nb.src(from + j)
		}
		c := seg[j]
		if c < utf8.RuneSelf {
			j++
			switch c {
			case ' ', '\t', '\v', '\f':
				if nb.lastSpace {
					continue
				}
				c, nb.lastSpace = ' ', true
			default:
				nb.lastSpace = false
			}
			nb.marks = addMark(nb.marks, len(nb.out), at)
			nb.out = append(nb.out, c)
			nb.lastASCII = true
			continue
		}
		r, n := utf8.DecodeRuneInString(seg[j:])
		j += n
		switch {
		case plainCJK(r):
			nb.write(seg[j-n:j], at, from+j-n, same)
			nb.lastASCII, nb.lastSpace = false, false
		case r == 0x85 || r == 0x2028 || r == 0x2029:
			// 4. Line breaks are kept: some rules stop at them.
			nb.marks = addMark(nb.marks, len(nb.out), at)
			nb.out = append(nb.out, '\n')
			nb.lastASCII, nb.lastSpace = true, false
		case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
			if !nb.lastSpace {
				nb.marks = addMark(nb.marks, len(nb.out), at)
				nb.out = append(nb.out, ' ')
			}
			nb.lastASCII, nb.lastSpace = true, true
		case ignorable(r):
			// NFKC of an ignorable is one; they went in step 1.
		case nb.lastASCII && unicode.In(r, unicode.Mn, unicode.Me):
			// A mark on ASCII reads as the letter it marks.
		default:
			// 3. The look-alike's ASCII skeleton, or the character.
			nb.lastSpace = false
			if m := asciiSkeleton(r); m != "" {
				if m == "i" || m == "l" {
					nb.amb = append(nb.amb, int32(len(nb.out)))
				}
				nb.write(m, at, 0, false)
				nb.lastASCII = true
				continue
			}
			nb.write(seg[j-n:j], at, from+j-n, same)
			nb.lastASCII = false
		}
	}
}

// write writes p, which came from the original at: all of it, or, when
// same (p is the cleaned text at cl), each byte from where the cleaned
// text's byte came from.
func (nb *normBuilder) write(p string, at, cl int, same bool) {
	for i := range len(p) {
		if same {
			at = nb.src(cl + i)
		}
		nb.marks = addMark(nb.marks, len(nb.out), at)
		nb.out = append(nb.out, p[i])
	}
}

// iters are NFKC iterators (one holds buffers of a kilobyte or so).
var iters = sync.Pool{New: func() any { return new(norm.Iter) }}

// dropIgnorable is s without its default-ignorable code points, invalid
// UTF-8 spelt U+FFFD, and the offset in s of each of its bytes.
func dropIgnorable(s string) (string, []int32) {
	clean := make([]byte, 0, len(s))
	coff := make([]int32, 0, len(s)+1)
	for i, r := range s {
		if ignorable(r) {
			continue
		}
		n := len(clean)
		clean = utf8.AppendRune(clean, r)
		for range len(clean) - n {
			coff = append(coff, int32(i))
		}
	}
	return string(clean), append(coff, int32(len(s)))
}

// skeletons remembers asciiSkeleton's answers ("" for none), for at most
// maxSkeletons characters.
var skeletons struct {
	sync.RWMutex
	m map[rune]string
}

const maxSkeletons = 1 << 14

// asciiSkeleton is what a non-ASCII character r reads as in ASCII, in lower
// case, or "" when it reads as no ASCII text: its TR39 confusables
// skeleton (of its lower case), with Latin small capitals read as their
// letters and combining marks left out; "" unless that is all ASCII.
func asciiSkeleton(r rune) string {
	if plainCJK(r) {
		return ""
	}
	skeletons.RLock()
	m, ok := skeletons.m[r]
	skeletons.RUnlock()
	if ok {
		return m
	}
	m = skeletonOf(r)
	skeletons.Lock()
	if skeletons.m == nil {
		skeletons.m = map[rune]string{}
	}
	if len(skeletons.m) < maxSkeletons {
		skeletons.m[r] = m
	}
	skeletons.Unlock()
	return m
}

// plainCJK: r is a kana, bopomofo, CJK ideograph or Hangul syllable that
// confusables.txt maps to no ASCII (TestPlainCJK checks it against the
// table): the bulk of Chinese, Japanese and Korean text costs no look-up.
func plainCJK(r rune) bool {
	switch {
	case r < 0x3040:
		return false
	case r <= 0x9FFF:
		return r != 0x30A0 && r != 0x30CE && r != 0x31D3 && r != 0x31D4 && r != 0x4E36 && r != 0x4E3F
	case r >= 0xAC00 && r <= 0xD7A3, r >= 0x20000 && r <= 0x3FFFF:
		return true
	}
	return false
}

func skeletonOf(r rune) string {
	sk := confusables.Skeleton(string(unicode.ToLower(r)))
	var b strings.Builder
	for _, c := range sk {
		if l, ok := smallCapitals[c]; ok {
			c = l
		}
		switch {
		case unicode.In(c, unicode.Mn, unicode.Me):
			continue
		case c >= utf8.RuneSelf:
			return ""
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// smallCapitals are the Latin small capitals (and kra) that confusables.txt
// does not map to the lower-case letter they read as.
var smallCapitals = map[rune]rune{
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ꜰ': 'f', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i',
	'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ꞯ': 'q', 'ʀ': 'r',
	'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z', 'ĸ': 'k',
}

// ignorable reports whether r is a Default_Ignorable_Code_Point (Unicode
// 16.0, DerivedCoreProperties.txt; TestIgnorableTable checks it against
// the unicode package's tables).
func ignorable(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r >= 0x180B && r <= 0x180F, r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F, r == 0x3164, r >= 0xFE00 && r <= 0xFE0F, r == 0xFEFF, r == 0xFFA0,
		r >= 0xFFF0 && r <= 0xFFF8, r >= 0x1BCA0 && r <= 0x1BCA3, r >= 0x1D173 && r <= 0x1D17A,
		r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
}
