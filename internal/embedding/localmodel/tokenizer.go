package localmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a Hugging Face tokenizer.json of the WordPiece kind (BERT,
// MiniLM, bge, e5, gte): its normalizer, pre-tokenizer, WordPiece model
// and [CLS] … [SEP] post-processor, read here rather than through a
// tokenizer library (sugarme/tokenizer, the pure-Go port hugot uses, calls
// log.Fatal or prints to stdout on odd input, which an MCP server on stdio
// cannot have; the tests check against it). Other kinds (BPE, Unigram) are
// refused with a clear error. It holds no state
// beyond the file: safe for concurrent use.
type Tokenizer struct {
	vocab    map[string]int
	unk      int
	prefix   string
	maxChars int

	norms []normStep
	pre   string // "bert", "whitespace" or "split" (WhitespaceSplit)

	// The single-sequence template: ids before and after the text, and
	// the type ids of each part.
	head, tail           []int
	headTypes, tailTypes []int
	textType             int
}

// normStep is one normalizer of a (flattened) sequence.
type normStep struct {
	kind                                string // "bert", "lower", "strip", "nfd", "nfc", "nfkd", "nfkc"
	clean, chinese, stripAccents, lower bool   // BertNormalizer's options
}

// maxTokenizer bounds tokenizer.json (real ones are ~0.7 MB; multilingual
// ones reach ~17 MB).
const maxTokenizer = 64 << 20

// ParseTokenizer reads a tokenizer.json.
func ParseTokenizer(b []byte) (*Tokenizer, error) {
	if len(b) > maxTokenizer {
		return nil, fmt.Errorf("larger than %d bytes", maxTokenizer)
	}
	var doc struct {
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Model         struct {
			Type     string         `json:"type"`
			Vocab    map[string]int `json:"vocab"`
			Unk      *string        `json:"unk_token"`
			Prefix   *string        `json:"continuing_subword_prefix"`
			MaxChars *int           `json:"max_input_chars_per_word"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	m := doc.Model
	switch {
	case m.Type == "" && m.Vocab == nil:
		return nil, errors.New("no model (want a WordPiece vocabulary)")
	case m.Type != "" && m.Type != "WordPiece":
		return nil, fmt.Errorf("model type %q is not supported: only WordPiece (BERT-family) tokenizers are", m.Type)
	case len(m.Vocab) == 0:
		return nil, errors.New("empty WordPiece vocabulary")
	}
	t := &Tokenizer{vocab: m.Vocab, prefix: "##", maxChars: 100}
	for tok, id := range m.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("vocabulary: token %q has a negative id", tok)
		}
	}
	unk := "[UNK]"
	if m.Unk != nil {
		unk = *m.Unk
	}
	id, ok := m.Vocab[unk]
	if !ok {
		return nil, fmt.Errorf("unk_token %q is not in the vocabulary", unk)
	}
	t.unk = id
	if m.Prefix != nil {
		t.prefix = *m.Prefix
	}
	if m.MaxChars != nil {
		t.maxChars = *m.MaxChars
	}
	var err error
	if t.norms, err = parseNormalizer(doc.Normalizer, 0); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if t.pre, err = parsePreTokenizer(doc.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if err := t.parseTemplate(doc.PostProcessor); err != nil {
		return nil, fmt.Errorf("post_processor: %w", err)
	}
	return t, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

func parseNormalizer(raw json.RawMessage, depth int) ([]normStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	if depth > 4 {
		return nil, errors.New("sequences nested too deep")
	}
	var n struct {
		Type        string            `json:"type"`
		Normalizers []json.RawMessage `json:"normalizers"`
		Clean       *bool             `json:"clean_text"`
		Chinese     *bool             `json:"handle_chinese_chars"`
		Strip       *bool             `json:"strip_accents"`
		Lower       *bool             `json:"lowercase"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	or := func(b *bool, d bool) bool {
		if b == nil {
			return d
		}
		return *b
	}
	switch n.Type {
	case "BertNormalizer":
		lower := or(n.Lower, true)
		// strip_accents null follows lowercase, as in Hugging Face's.
		return []normStep{{kind: "bert", clean: or(n.Clean, true), chinese: or(n.Chinese, true), stripAccents: or(n.Strip, lower), lower: lower}}, nil
	case "Lowercase":
		return []normStep{{kind: "lower"}}, nil
	case "StripAccents":
		return []normStep{{kind: "strip"}}, nil
	case "NFD", "NFC", "NFKD", "NFKC":
		return []normStep{{kind: strings.ToLower(n.Type)}}, nil
	case "Sequence":
		var out []normStep
		for _, r := range n.Normalizers {
			s, err := parseNormalizer(r, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("type %q is not supported (BertNormalizer, Lowercase, StripAccents, NFD/NFC/NFKD/NFKC and Sequence are)", n.Type)
}

func parsePreTokenizer(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "split", nil
	}
	var p struct {
		Type          string            `json:"type"`
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", err
	}
	switch p.Type {
	case "BertPreTokenizer":
		return "bert", nil
	case "Whitespace":
		return "whitespace", nil
	case "WhitespaceSplit":
		return "split", nil
	case "Sequence":
		if len(p.PreTokenizers) == 1 {
			return parsePreTokenizer(p.PreTokenizers[0])
		}
	}
	return "", fmt.Errorf("type %q is not supported (BertPreTokenizer, Whitespace and WhitespaceSplit are)", p.Type)
}

// parseTemplate reads the single-sequence part of a TemplateProcessing or
// BertProcessing post-processor (none: no special tokens).
func (t *Tokenizer) parseTemplate(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var p struct {
		Type   string `json:"type"`
		Single []struct {
			Special *struct {
				ID     string `json:"id"`
				TypeID int    `json:"type_id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				TypeID int `json:"type_id"`
			} `json:"Sequence"`
		} `json:"single"`
		Specials map[string]struct {
			IDs []int `json:"ids"`
		} `json:"special_tokens"`
		Cls []any `json:"cls"`
		Sep []any `json:"sep"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	switch p.Type {
	case "BertProcessing":
		pair := func(v []any) (int, error) {
			if len(v) == 2 {
				if f, ok := v[1].(float64); ok && f >= 0 && f == float64(int(f)) {
					return int(f), nil
				}
			}
			return 0, errors.New("cls and sep must be [token, id]")
		}
		cls, err := pair(p.Cls)
		if err != nil {
			return err
		}
		sep, err := pair(p.Sep)
		if err != nil {
			return err
		}
		t.head, t.tail = []int{cls}, []int{sep}
		t.headTypes, t.tailTypes = []int{0}, []int{0}
		return nil
	case "TemplateProcessing":
		seen := false
		for _, piece := range p.Single {
			switch {
			case piece.Sequence != nil:
				if seen {
					return errors.New("the single template holds the text twice")
				}
				seen = true
				t.textType = piece.Sequence.TypeID
			case piece.Special != nil:
				sp, ok := p.Specials[piece.Special.ID]
				if !ok {
					return fmt.Errorf("special token %q is not defined", piece.Special.ID)
				}
				for _, id := range sp.IDs {
					if id < 0 {
						return fmt.Errorf("special token %q has a negative id", piece.Special.ID)
					}
					if seen {
						t.tail = append(t.tail, id)
						t.tailTypes = append(t.tailTypes, piece.Special.TypeID)
					} else {
						t.head = append(t.head, id)
						t.headTypes = append(t.headTypes, piece.Special.TypeID)
					}
				}
			}
		}
		if !seen {
			return errors.New("the single template has no $A")
		}
		return nil
	}
	return fmt.Errorf("type %q is not supported (TemplateProcessing and BertProcessing are)", p.Type)
}

// Encode tokenizes text into ids and type ids, the template's special
// tokens around it, at most maxLen in all (0: no limit; the text is cut,
// the special tokens kept). It never fails: a word it cannot split is the
// unknown token.
func (t *Tokenizer) Encode(text string, maxLen int) (ids, types []int) {
	text = t.normalize(text)
	ids = append(ids, t.head...)
	types = append(types, t.headTypes...)
	room := -1
	if maxLen > 0 {
		room = max(0, maxLen-len(t.head)-len(t.tail))
	}
	for _, w := range t.preTokenize(text) {
		for _, id := range t.wordPiece(w) {
			if room == 0 {
				break
			}
			ids = append(ids, id)
			types = append(types, t.textType)
			room--
		}
		if room == 0 {
			break
		}
	}
	ids = append(ids, t.tail...)
	types = append(types, t.tailTypes...)
	return ids, types
}

func (t *Tokenizer) normalize(s string) string {
	for _, n := range t.norms {
		switch n.kind {
		case "bert":
			s = bertNormalize(s, n)
		case "lower":
			s = strings.ToLower(s)
		case "strip":
			s = stripAccents(s)
		case "nfd":
			s = norm.NFD.String(s)
		case "nfc":
			s = norm.NFC.String(s)
		case "nfkd":
			s = norm.NFKD.String(s)
		case "nfkc":
			s = norm.NFKC.String(s)
		}
	}
	return s
}

// bertNormalize is Hugging Face's BertNormalizer: clean (drop NUL, U+FFFD
// and control characters, whitespace to spaces), space out CJK
// ideographs, strip accents, lowercase.
func bertNormalize(s string, n normStep) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case n.clean && (r == 0 || r == 0xfffd || isControl(r)):
		case n.clean && isWhitespace(r):
			b.WriteByte(' ')
		case n.chinese && isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s = b.String()
	if n.stripAccents {
		s = stripAccents(s)
	}
	if n.lower {
		s = strings.ToLower(s)
	}
	return s
}

func stripAccents(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
}

func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

// isCJK is BERT's "Chinese character" ranges.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) || (r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// isPunct is BERT's punctuation: ASCII symbols and Unicode P*.
func isPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// preTokenize splits normalized text into words.
func (t *Tokenizer) preTokenize(s string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	switch t.pre {
	case "split":
		return strings.FieldsFunc(s, unicode.IsSpace)
	case "whitespace": // \w+|[^\w\s]+
		word := func(r rune) bool {
			return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
		}
		prev := 0 // 0 none, 1 word, 2 other
		for _, r := range s {
			k := 2
			switch {
			case unicode.IsSpace(r):
				flush()
				prev = 0
				continue
			case word(r):
				k = 1
			}
			if k != prev {
				flush()
			}
			cur.WriteRune(r)
			prev = k
		}
		flush()
		return out
	}
	for _, r := range s { // bert: whitespace splits, each punctuation mark alone
		switch {
		case unicode.IsSpace(r):
			flush()
		case isPunct(r):
			flush()
			out = append(out, string(r))
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// wordPiece splits a word greedily into the longest vocabulary pieces; a
// word that does not split (or is too long) is the unknown token.
func (t *Tokenizer) wordPiece(w string) []int {
	rs := []rune(w)
	if len(rs) > t.maxChars {
		return []int{t.unk}
	}
	var out []int
	for start := 0; start < len(rs); {
		end, found := len(rs), -1
		for ; end > start; end-- {
			piece := string(rs[start:end])
			if start > 0 {
				piece = t.prefix + piece
			}
			if id, ok := t.vocab[piece]; ok {
				found = id
				break
			}
		}
		if found < 0 {
			return []int{t.unk}
		}
		out = append(out, found)
		start = end
	}
	return out
}
