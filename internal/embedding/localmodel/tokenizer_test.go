package localmodel

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sugarme/tokenizer/pretrained"

	"github.com/agent-tools/agent-tools/internal/embedding/localmodel/bertgen"
)

// tokTexts: words, pieces, punctuation, accents, CJK, control characters,
// non-breaking and odd spaces, a path, an empty text, a long one.
var tokTexts = []string{
	"get the weather forecast for a city",
	"Unaffable users searching MySQL tables!",
	"Créer un café — naïve façade",
	"read_file: Read a file from /tmp/notes.txt (path, encoding).",
	"天气预报 weather 北京",
	"tab\there\x00nul\u200bzero-width\u00a0nbsp\u2003em-space\r\nline",
	"",
	strings.Repeat("list all the files in a directory ", 40),
	"ÅNGSTRÖM ǅ ﬁle",
}

func mustTokenizer(t testing.TB, b []byte) *Tokenizer {
	t.Helper()
	tk, err := ParseTokenizer(b)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestTokenizerAgainstReference(t *testing.T) {
	vocab := bertgen.Vocab()
	tk := mustTokenizer(t, bertgen.TokenizerJSON(vocab))
	for _, text := range tokTexts {
		for _, maxLen := range []int{0, 128, 5} {
			ids, types := tk.Encode(text, maxLen)
			want := bertgen.Tokenize(vocab, text, maxLen)
			if !slices.Equal(ids, want) {
				t.Errorf("%.40q (max %d): %v, reference %v", text, maxLen, ids, want)
			}
			if len(types) != len(ids) || slices.ContainsFunc(types, func(x int) bool { return x != 0 }) {
				t.Errorf("%.40q: type ids %v", text, types)
			}
		}
	}
}

// TestTokenizerAgainstSugarme compares with an independent Go port of
// Hugging Face's tokenizers (github.com/sugarme/tokenizer, a test
// dependency only) on the same file. Told to strip accents explicitly
// and after NFD: it reads "strip_accents": null as false and does not
// decompose first.
func TestTokenizerAgainstSugarme(t *testing.T) {
	vocab := bertgen.Vocab()
	tj := bertgen.TokenizerJSON(vocab)
	tk := mustTokenizer(t, tj)
	var doc map[string]any
	if err := json.Unmarshal(tj, &doc); err != nil {
		t.Fatal(err)
	}
	bn := doc["normalizer"].(map[string]any)
	bn["strip_accents"] = true
	doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFD"}, bn}}
	fixed, _ := json.Marshal(doc)
	ref, err := pretrained.FromReader(bytes.NewReader(fixed))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range tokTexts {
		if strings.ContainsAny(text, "\x00\u200b") {
			continue // sugarme keeps format characters (Cf) that BERT drops
		}
		enc, err := ref.EncodeSingle(text, true)
		if err != nil {
			t.Fatal(err)
		}
		if ids, _ := tk.Encode(text, 0); !slices.Equal(ids, enc.Ids) {
			t.Errorf("%.40q: %v, sugarme %v", text, ids, enc.Ids)
		}
	}
}

// The example of Hugging Face's WordPiece documentation.
func TestTokenizerKnownAnswer(t *testing.T) {
	vocab := bertgen.Vocab()
	tk := mustTokenizer(t, bertgen.TokenizerJSON(vocab))
	ids, _ := tk.Encode("Unaffable", 0)
	var toks []string
	for _, id := range ids {
		toks = append(toks, vocab[id])
	}
	if got := strings.Join(toks, " "); got != "[CLS] un ##aff ##able [SEP]" {
		t.Errorf("Unaffable: %s", got)
	}
}

func TestTokenizerBertProcessingAndErrors(t *testing.T) {
	base := `"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hi": 3}, "unk_token": "[UNK]"}`
	tk := mustTokenizer(t, []byte(`{"normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "WhitespaceSplit"},
		"post_processor": {"type": "BertProcessing", "cls": ["[CLS]", 1], "sep": ["[SEP]", 2]}, `+base+`}`))
	if ids, _ := tk.Encode("HI there", 0); !slices.Equal(ids, []int{1, 3, 0, 2}) {
		t.Errorf("BertProcessing: %v", ids)
	}
	for _, tc := range []struct{ json, want string }{
		{`{`, "malformed JSON"},
		{`{}`, "no model"},
		{`{"model": {"type": "BPE", "vocab": {"a": 0}}}`, `model type "BPE" is not supported`},
		{`{"model": {"type": "Unigram"}}`, `model type "Unigram" is not supported`},
		{`{"model": {"type": "WordPiece", "vocab": {"a": 0}}}`, `unk_token "[UNK]" is not in the vocabulary`},
		{`{"normalizer": {"type": "Precompiled"}, ` + base + `}`, `normalizer: type "Precompiled" is not supported`},
		{`{"pre_tokenizer": {"type": "Metaspace"}, ` + base + `}`, `pre_tokenizer: type "Metaspace" is not supported`},
		{`{"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[X]"}}, {"Sequence": {"id": "A"}}]}, ` + base + `}`, `special token "[X]" is not defined`},
		{`{"post_processor": {"type": "RobertaProcessing"}, ` + base + `}`, `post_processor: type "RobertaProcessing" is not supported`},
	} {
		_, err := ParseTokenizer([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.json, err, tc.want)
		}
	}
}

// FuzzTokenizer: whatever tokenizer.json and text hold, parsing returns a
// tokenizer or an error and encoding stays within its bounds; no panic.
//
//	go test -run '^$' -fuzz FuzzTokenizer -fuzztime 30s ./internal/embedding/localmodel
func FuzzTokenizer(f *testing.F) {
	f.Add(bertgen.TokenizerJSON(bertgen.Vocab()), "Créer un café 天气", 8)
	f.Add([]byte(`{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1, "##b": 2}}}`), "ab a b", 3)
	f.Add([]byte(`{"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "BertNormalizer", "lowercase": false}]}, "pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "WordPiece", "vocab": {"[UNK]": 0}, "continuing_subword_prefix": "", "max_input_chars_per_word": 2}}`), "x_y-z", 0)
	f.Add([]byte(`{"post_processor": {"type": "BertProcessing", "cls": ["a", 5], "sep": ["b", 6]}, "model": {"vocab": {"[UNK]": 0}}}`), "q", 1)
	f.Add([]byte(`null`), "", 0)
	f.Fuzz(func(t *testing.T, tj []byte, text string, maxLen int) {
		tk, err := ParseTokenizer(tj)
		if err != nil {
			return
		}
		maxLen %= 600
		ids, types := tk.Encode(text, maxLen)
		if len(types) != len(ids) {
			t.Fatalf("%d ids, %d types", len(ids), len(types))
		}
		if specials := len(tk.head) + len(tk.tail); maxLen > specials && len(ids) > maxLen {
			t.Fatalf("%d ids over the limit %d", len(ids), maxLen)
		}
		for _, id := range ids {
			if id < 0 {
				t.Fatalf("negative id %d", id)
			}
		}
	})
}
