//go:build onnx

package localmodel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/embedding/localmodel/bertgen"
)

// texts embedded by the equivalence tests: plain words, words split into
// pieces, punctuation, accents, a path, a long one (cut), an empty one.
var texts = []string{
	"get the weather forecast for a city",
	"Unaffable users searching MySQL tables!",
	"Créer un café — naïve façade",
	"read_file: Read a file from /tmp/notes.txt (path, encoding).",
	"",
	strings.Repeat("list all the files in a directory and its subdirectories ", 30),
	"x",
}

// writeModel writes a model folder of shape s to a fresh directory.
func writeModel(t testing.TB, s bertgen.Shape, pooling string, normalize bool) (string, *bertgen.Weights, []string) {
	t.Helper()
	dir := t.TempDir()
	vocab := bertgen.Vocab()
	if s.Vocab == 0 {
		s.Vocab = len(vocab)
	}
	w := bertgen.Random(s, 7)
	if err := (bertgen.Folder{Weights: w, Vocab: vocab, Pooling: pooling, Normalize: normalize}).Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir, w, vocab
}

// checkAgainstReference embeds texts with the model folder and with the
// reference (bertgen's own tokenizer and plain-Go forward pass) and wants
// every pair at cosine ≥ .999, while different texts stay apart (so the
// comparison can tell a wrong vector from a right one).
func checkAgainstReference(t *testing.T, dir string, w *bertgen.Weights, vocab []string, pooling string, normalize bool, texts []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	m, err := Load(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	t.Logf("loaded in %v", time.Since(start))
	start = time.Now()
	got, err := m.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("embedded %d texts in %v", len(texts), time.Since(start))
	maxTok := min(w.MaxPositions, DefaultMaxTokens)
	want := make([][]float32, len(texts))
	for i, text := range texts {
		ids := bertgen.Tokenize(vocab, text, maxTok)
		want[i] = bertgen.Pool(w.Forward(ids, make([]int, len(ids))), pooling, normalize)
		if c := bertgen.Cosine(got[i], want[i]); c < 0.999 {
			t.Errorf("text %d %.40q: cosine with the reference %.5f, want ≥ .999", i, text, c)
		}
		if len(got[i]) != w.Hidden {
			t.Errorf("text %d: %d dimensions, want %d", i, len(got[i]), w.Hidden)
		}
		if normalize {
			if n := bertgen.Cosine(got[i], got[i]); n < 0.999 {
				t.Errorf("not unit length")
			}
		}
	}
	for i := range want {
		for j := range i {
			if c := bertgen.Cosine(want[i], want[j]); c > 0.99 {
				t.Errorf("reference vectors of texts %d and %d at cosine %.4f: the check would not discriminate", i, j, c)
			}
		}
	}
}

func TestMatchesReferenceSmall(t *testing.T) {
	for _, tc := range []struct {
		pooling   string
		normalize bool
	}{{PoolMean, true}, {PoolCLS, false}} {
		t.Run(tc.pooling, func(t *testing.T) {
			dir, w, vocab := writeModel(t, bertgen.Small(0), tc.pooling, tc.normalize)
			checkAgainstReference(t, dir, w, vocab, tc.pooling, tc.normalize, texts)
		})
	}
}

// The real MiniLM-L6 shape (6 layers, hidden 384, 12 heads, intermediate
// 1536, 30,522 embeddings, 512 positions): 90 MB of random weights. The
// texts are the short ones (a 512-token one costs ~20 s here; the small
// model covers cutting).
func TestMatchesReferenceMiniLMShape(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the MiniLM-shaped model takes seconds to build and run")
	}
	dir, w, vocab := writeModel(t, bertgen.MiniLM(), PoolMean, true)
	short := slices.DeleteFunc(slices.Clone(texts), func(s string) bool { return len(s) > 100 })
	checkAgainstReference(t, dir, w, vocab, PoolMean, true, short)
}

func TestTokenizerMatchesReference(t *testing.T) {
	dir, _, vocab := writeModel(t, bertgen.Small(0), PoolMean, false)
	m, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, text := range texts {
		ids, _, err := m.encode(text)
		if err != nil {
			t.Fatal(err)
		}
		if want := bertgen.Tokenize(vocab, text, m.Spec().MaxTokens); !slices.Equal(ids, want) {
			t.Errorf("%.40q: ids %v, reference %v", text, ids, want)
		}
	}
}

func TestMalformedFolders(t *testing.T) {
	good, _, _ := writeModel(t, bertgen.Small(0), PoolMean, false)
	copyDir := func(t *testing.T) string {
		dir := t.TempDir()
		for _, f := range []string{"model.onnx", "tokenizer.json", "config.json", "modules.json", "1_Pooling/config.json"} {
			b, err := os.ReadFile(filepath.Join(good, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"garbage model", "model.onnx", "not a protobuf at all \xff\xff\xff", "model.onnx: not an ONNX model"},
		{"empty model", "model.onnx", "", "model.onnx"},
		{"garbage tokenizer", "tokenizer.json", "{\"model\": 42", "tokenizer.json"},
		{"tokenizer of another kind", "tokenizer.json", `{"model": {"type": "Nonsense"}}`, "tokenizer.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t)
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			m, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			_, err = m.Embed(ctx, []string{"hello"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("Embed: %v, want an error naming %s and %q", err, dir, tc.want)
			}
		})
	}
}

// The cost of the pure-Go path on the MiniLM-L6 shape (docs/discovery.md):
//
//	go test -tags onnx -run '^$' -bench MiniLM -benchtime 10x ./internal/embedding/localmodel
func BenchmarkMiniLMQuery(b *testing.B) {
	m := loadMiniLM(b)
	q := []string{"get the weather forecast for a city"}
	for b.Loop() {
		if _, err := m.Embed(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMiniLMTools embeds tool texts of a typical length (~30
// tokens), a batch of 8 per op; ns/op ÷ 8 is one tool's cost.
func BenchmarkMiniLMTools(b *testing.B) {
	m := loadMiniLM(b)
	tools := make([]string, 8)
	for i := range tools {
		tools[i] = fmt.Sprintf("read_file %d: Read a file from the local disk and return its text. Parameters: path, encoding. (filesystem: local files)", i)
	}
	for b.Loop() {
		if _, err := m.Embed(context.Background(), tools); err != nil {
			b.Fatal(err)
		}
	}
}

func loadMiniLM(b *testing.B) *Model {
	dir, _, _ := writeModel(b, bertgen.MiniLM(), PoolMean, true)
	start := time.Now()
	m, err := Load(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("MiniLM-shaped model loaded in %v", time.Since(start))
	b.Cleanup(func() { m.Close() })
	return m
}

// Queries and background batches embed at once: the same vectors as one
// at a time.
func TestConcurrentEmbed(t *testing.T) {
	dir, _, _ := writeModel(t, bertgen.Small(0), PoolMean, true)
	m, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range texts {
				j := (i + g) % len(texts)
				v, err := m.Embed(context.Background(), []string{texts[j]})
				if err == nil && bertgen.Cosine(v[0], want[j]) < 0.9999 {
					err = fmt.Errorf("text %d: another vector when embedded concurrently", j)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
