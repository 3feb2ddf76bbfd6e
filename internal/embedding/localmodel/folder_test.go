package localmodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/embedding/localmodel/bertgen"
)

func writeFolder(t *testing.T, f bertgen.Folder) string {
	t.Helper()
	dir := t.TempDir()
	if f.Vocab == nil {
		f.Vocab = bertgen.Vocab()
	}
	if f.Weights == nil {
		f.Weights = bertgen.Random(bertgen.Shape{Layers: 1, Hidden: 8, Heads: 2, Intermediate: 8, Vocab: len(f.Vocab), MaxPositions: 64, TypeVocab: 2}, 1)
	}
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestInspect(t *testing.T) {
	for _, tc := range []struct {
		name      string
		f         bertgen.Folder
		pooling   string
		normalize bool
		maxTokens int
	}{
		{"no pooling files: mean", bertgen.Folder{}, PoolMean, false, 64},
		{"mean, normalized", bertgen.Folder{Pooling: "mean", Normalize: true}, PoolMean, true, 64},
		{"cls (bge)", bertgen.Folder{Pooling: "cls"}, PoolCLS, false, 64},
		{"max_seq_length", bertgen.Folder{Pooling: "mean", MaxSeq: 32}, PoolMean, false, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Inspect(writeFolder(t, tc.f))
			if err != nil {
				t.Fatal(err)
			}
			if s.Pooling != tc.pooling || s.Normalize != tc.normalize || s.MaxTokens != tc.maxTokens || s.ONNX != "model.onnx" || s.Hidden != 8 || !strings.HasPrefix(s.ID, "local:") {
				t.Errorf("%+v", s)
			}
		})
	}
	// onnx/model.onnx, as Hugging Face repositories with several exports
	// lay it out.
	dir := writeFolder(t, bertgen.Folder{})
	if err := os.Mkdir(filepath.Join(dir, "onnx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "model.onnx"), filepath.Join(dir, "onnx", "model.onnx")); err != nil {
		t.Fatal(err)
	}
	if s, err := Inspect(dir); err != nil || s.ONNX != filepath.Join("onnx", "model.onnx") {
		t.Errorf("onnx/model.onnx: %+v %v", s, err)
	}
}

// The identity keys the vector cache: it changes with the weights and the
// tokenizer, not with the folder's place.
func TestInspectIdentity(t *testing.T) {
	vocab := bertgen.Vocab()
	shape := bertgen.Shape{Layers: 1, Hidden: 8, Heads: 2, Intermediate: 8, Vocab: len(vocab), MaxPositions: 64, TypeVocab: 2}
	a := writeFolder(t, bertgen.Folder{Weights: bertgen.Random(shape, 1)})
	b := writeFolder(t, bertgen.Folder{Weights: bertgen.Random(shape, 1)})
	c := writeFolder(t, bertgen.Folder{Weights: bertgen.Random(shape, 2)})
	d := writeFolder(t, bertgen.Folder{Weights: bertgen.Random(shape, 1), Vocab: bertgen.Vocab("extra")})
	id := func(dir string) string {
		s, err := Inspect(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	if id(a) != id(b) {
		t.Error("the same model in two folders has two identities")
	}
	if id(a) == id(c) || id(a) == id(d) {
		t.Error("other weights or another tokenizer keep the identity")
	}
}

func TestInspectErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	writeFile(t, file, nil, 0o644)
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, "no such file or directory"},
		{"a file", func(*testing.T) string { return file }, "not a directory"},
		{"empty", func(t *testing.T) string { return t.TempDir() }, "no model.onnx (nor onnx/model.onnx)"},
		{"no tokenizer", func(t *testing.T) string {
			d := writeFolder(t, bertgen.Folder{})
			os.Remove(filepath.Join(d, "tokenizer.json"))
			return d
		}, "no tokenizer.json"},
		{"malformed config", func(t *testing.T) string {
			d := writeFolder(t, bertgen.Folder{})
			writeFile(t, filepath.Join(d, "config.json"), []byte("{"), 0o644)
			return d
		}, "config.json: malformed JSON"},
		{"max pooling", func(t *testing.T) string {
			d := writeFolder(t, bertgen.Folder{Pooling: "mean"})
			writeFile(t, filepath.Join(d, "1_Pooling", "config.json"), []byte(`{"pooling_mode_max_tokens": true}`), 0o644)
			return d
		}, "1_Pooling/config.json: pooling_mode_max_tokens is not supported"},
		{"named pooling", func(t *testing.T) string {
			d := writeFolder(t, bertgen.Folder{Pooling: "mean"})
			writeFile(t, filepath.Join(d, "1_Pooling", "config.json"), []byte(`{"pooling_mode": "lasttoken"}`), 0o644)
			return d
		}, `pooling_mode "lasttoken" is not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			_, err := Inspect(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "model folder "+dir) {
				t.Errorf("%v, want %q naming the folder", err, tc.want)
			}
		})
	}
}

func TestOpenWithoutTheTag(t *testing.T) {
	if Built {
		t.Skip("built with -tags onnx")
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), BuildCommand) {
		t.Errorf("Open: %v, want the build command", err)
	}
}

func writeFile(t *testing.T, path string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
}
