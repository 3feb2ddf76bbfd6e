package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go's o200k_base: the regexp2 pre-tokenizer and
// its BPE, which Count must agree with exactly.
var reference = sync.OnceValue(func() *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(Encoding)
	if err != nil {
		panic(err)
	}
	return enc
})

func checkSame(t testing.TB, s string) {
	t.Helper()
	if len(s) > MaxExact {
		return
	}
	got, est := Count(s)
	want := len(reference().EncodeOrdinary(s))
	if got != want || est {
		t.Fatalf("Count(%q) = %d (estimated %v), tiktoken-go %d", s, got, est, want)
	}
}

// corpus are texts of the kinds tools return, and the pre-tokenizer's
// corners: contractions, line breaks and trailing spaces, digits,
// combining marks, title case, scripts without case, emoji.
var corpus = []string{
	"hello world", "The quick brown fox jumps over the lazy dog.",
	`{"id": 4711, "name": "build-and-test", "status": "completed", "conclusion": "failure"}`,
	"func main() {\n\tfmt.Println(\"hi\")\n}\n", "  leading and trailing  ", "a\n\n\nb", "a \n \n b", "x\r\ny\rz",
	"tabs\tand\vvertical\ffeeds", "trailing spaces   ", "   ", "\n", " \n", "\n ", "a  b", "a   \tb",
	"I'm sure you're right, we'll see: it's John's, they've gone, I'd say", "DON'T SHOUT, IT'S LOUD", "'s alone", "x'S'T'RE",
	"12345678901", "3.14159 and 1,000,000 and ½ ⅓ ٣٤٥ ①②", "v1.2.3-rc.4+build.5", "0x1F 1e-9",
	"naïve café résumé", "e\u0301 combining", "\u0301\u0302 marks alone", "Ǆemal ǅemal ǆemal", "ΑΒΓ αβγ Ωmega",
	"日本語のテキストです。漢字とかな。", "中文文本，带标点。", "한국어 텍스트", "العربية نص", "हिन्दी पाठ", "ไทย ภาษา",
	"emoji 😀👍🏽 👨‍👩‍👧 🇩🇪", "path/to/file.go:12:3 /usr/bin/env ./x", "https://example.com/a?b=c&d=e#f", "<html><body>x</body></html>",
	"--flag=value -x", "====\n----\n", "a/b//c///", "!!!???...", "\u00a0nbsp\u00a0", "\u2028line\u2029para", "\u3000ideographic space",
	"MixedCASEWords andCamelCase HTTPServer XMLHttpRequest", "ALLCAPS", "x\u0085nel", "\x00\x01 control",
	"bad\xffutf8\xfe", "\xc3", "ok\xe2\x82",
}

func TestCountMatchesTiktoken(t *testing.T) {
	for _, s := range corpus {
		checkSame(t, s)
	}
	// The repository's own docs: prose, tables, code and JSON.
	docs, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for chunk := range strings.SplitSeq(string(b), "\n\n") {
			checkSame(t, chunk)
		}
	}
}

// Random texts over an alphabet of every class the pre-tokenizer tells
// apart, dense in the corners (apostrophes, line breaks, marks).
func TestCountMatchesTiktokenRandom(t *testing.T) {
	alphabet := []rune("aZ'sStTrReEvVmMlLdD09 \t\n\r/.,-_\"{}\u00a0\u0085\u2028\u3000é\u0301ǅʰ日本αΩ٣½😀\u200d")
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	var b strings.Builder
	for range n {
		b.Reset()
		for range rng.IntN(24) + 1 {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		checkSame(t, b.String())
	}
}

func FuzzCountMatchesTiktoken(f *testing.F) {
	for _, s := range corpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // both make each bad byte U+FFFD; the corpus has a few
		}
		checkSame(t, s)
	})
}
