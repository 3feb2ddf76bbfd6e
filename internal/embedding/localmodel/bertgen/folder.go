package bertgen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// words are the whole words of Vocab beyond single characters: enough of a
// tool catalog's language that most words are one token, the rest split
// into pieces the way a real WordPiece vocabulary splits rare words.
const words = `the a an of to in for on with by from and or is are be it this that as at
file files read write list create delete update get set search find query send open close
weather forecast city temperature rain map route address trip travel location geocode
database table row rows sql record records user users issue issues pull request repository
repo branch commit email message messages calendar event events note notes page pages
document documents text image images price stock market song music play audio video
translate language code run command shell process time date today tomorrow report data
directory folder path name id value key token api web url http browser download upload
new all one two current given into its your my our their which what when how
mysql postgres cosmos azure storage account blob container resource group subscription
##s ##ing ##ed ##er ##ly ##tion ##ment ##able ##ful ##ness ##al ##ize ##es
un ##aff ##able`

// Vocab is the tokenizer's vocabulary: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3,
// [MASK] 4, ASCII punctuation and digits, the letters and their ##
// continuations (so any ASCII word tokenizes without [UNK]), then words,
// then extra (lowercased, deduplicated) up to limit entries (0: all).
func Vocab(extra ...string) []string {
	return VocabLimit(0, extra...)
}

// VocabLimit is Vocab with at most limit entries (0: no limit).
func VocabLimit(limit int, extra ...string) []string {
	v := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for c := '!'; c <= '~'; c++ {
		if !unicode.IsLetter(c) || unicode.IsLower(c) {
			v = append(v, string(c))
		}
	}
	for c := 'a'; c <= 'z'; c++ {
		v = append(v, "##"+string(c))
	}
	for c := '0'; c <= '9'; c++ {
		v = append(v, "##"+string(c))
	}
	seen := map[string]bool{}
	for _, t := range v {
		seen[t] = true
	}
	for _, w := range append(strings.Fields(words), extra...) {
		w = strings.ToLower(w)
		if limit > 0 && len(v) >= limit {
			break
		}
		if w != "" && !seen[w] {
			seen[w] = true
			v = append(v, w)
		}
	}
	return v
}

// Special token ids in Vocab.
const (
	PadID = 0
	UnkID = 1
	ClsID = 2
	SepID = 3
)

// TokenizerJSON is a Hugging Face tokenizer.json for vocab: the
// BertNormalizer (lowercasing, accents stripped), BertPreTokenizer,
// WordPiece and the [CLS] $A [SEP] template, as bert-base-uncased and
// the MiniLM/bge models built on it have.
func TokenizerJSON(vocab []string) []byte {
	ids := map[string]int{}
	for i, t := range vocab {
		ids[t] = i
	}
	var added []map[string]any
	for i, t := range vocab[:5] {
		added = append(added, map[string]any{"id": i, "content": t, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	special := func(t string) map[string]any {
		return map[string]any{"id": t, "ids": []int{ids[t]}, "tokens": []string{t}}
	}
	tok := map[string]any{
		"version":       "1.0",
		"truncation":    nil,
		"padding":       nil,
		"added_tokens":  added,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
			},
			"pair": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 1}},
			},
			"special_tokens": map[string]any{"[CLS]": special("[CLS]"), "[SEP]": special("[SEP]")},
		},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": ids},
	}
	b, _ := json.MarshalIndent(tok, "", " ")
	return b
}

// Tokenize is the reference tokenizer: BERT's basic tokenizer (clean,
// lowercase, strip accents, split CJK characters, whitespace and
// punctuation), greedy longest-match WordPiece, then [CLS] … [SEP], at most
// maxLen ids (0: no limit).
func Tokenize(vocab []string, text string, maxLen int) []int {
	ids := map[string]int{}
	for i, t := range vocab {
		ids[t] = i
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(text)) {
		switch {
		case r == 0 || r == 0xfffd || (r != '\t' && r != '\n' && r != '\r' && (unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z))):
			// Hugging Face drops "other" characters (C*: controls, format
			// characters such as zero-width spaces, unassigned ones).
		case unicode.Is(unicode.Mn, r):
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case isPunct(r) || unicode.Is(unicode.Han, r):
			b.WriteString(" " + string(r) + " ")
		default:
			b.WriteRune(r)
		}
	}
	out := []int{ClsID}
	for _, w := range strings.Fields(b.String()) {
		out = append(out, wordPiece(ids, w)...)
	}
	if maxLen > 0 && len(out) > maxLen-1 {
		out = out[:maxLen-1]
	}
	return append(out, SepID)
}

func wordPiece(ids map[string]int, w string) []int {
	rs := []rune(w)
	if len(rs) > 100 {
		return []int{UnkID}
	}
	var out []int
	for start := 0; start < len(rs); {
		end := len(rs)
		found := -1
		for ; end > start; end-- {
			piece := string(rs[start:end])
			if start > 0 {
				piece = "##" + piece
			}
			if id, ok := ids[piece]; ok {
				found = id
				break
			}
		}
		if found < 0 {
			return []int{UnkID}
		}
		out = append(out, found)
		start = end
	}
	return out
}

// isPunct is BERT's punctuation: ASCII non-alphanumerics and Unicode P*.
func isPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// Folder describes a model folder to write.
type Folder struct {
	Weights *Weights
	Vocab   []string
	// Pooling is "mean" (Sentence-Transformers' default, MiniLM) or "cls"
	// (bge); "" writes no 1_Pooling/config.json.
	Pooling string
	// Normalize lists the Normalize module in modules.json.
	Normalize bool
	// MaxSeq, when set, is sentence_bert_config.json's max_seq_length.
	MaxSeq int
}

// Write writes the folder: model.onnx, tokenizer.json, config.json and,
// with Pooling, modules.json and 1_Pooling/config.json.
func (f Folder) Write(dir string) error {
	w := f.Weights
	cfg, _ := json.MarshalIndent(map[string]any{
		"architectures": []string{"BertModel"}, "model_type": "bert",
		"hidden_size": w.Hidden, "num_hidden_layers": w.Shape.Layers, "num_attention_heads": w.Heads,
		"intermediate_size": w.Intermediate, "vocab_size": w.Vocab, "max_position_embeddings": w.MaxPositions,
		"type_vocab_size": w.TypeVocab, "hidden_act": "gelu", "layer_norm_eps": LayerNormEps, "pad_token_id": 0,
	}, "", "  ")
	files := map[string][]byte{
		"model.onnx":     w.ONNX(),
		"tokenizer.json": TokenizerJSON(f.Vocab),
		"config.json":    cfg,
	}
	if f.Pooling != "" {
		mods := []map[string]any{
			{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
			{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
		}
		if f.Normalize {
			mods = append(mods, map[string]any{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
		}
		files["modules.json"], _ = json.MarshalIndent(mods, "", "  ")
		files[filepath.Join("1_Pooling", "config.json")], _ = json.MarshalIndent(map[string]any{
			"word_embedding_dimension": w.Hidden, "pooling_mode_cls_token": f.Pooling == "cls",
			"pooling_mode_mean_tokens": f.Pooling == "mean", "pooling_mode_max_tokens": false,
			"pooling_mode_mean_sqrt_len_tokens": false,
		}, "", "  ")
	}
	if f.MaxSeq > 0 {
		files["sentence_bert_config.json"], _ = json.Marshal(map[string]any{"max_seq_length": f.MaxSeq, "do_lower_case": false})
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("bertgen: %w", err)
		}
	}
	return nil
}
