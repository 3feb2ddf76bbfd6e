//go:build onnx

package app_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/embedding"
	"github.com/agent-tools/agent-tools/internal/embedding/localmodel/bertgen"
	"github.com/agent-tools/agent-tools/internal/index"
)

// modelProject is a project with two tools and index.semantic.model
// naming a small random BERT folder (bertgen), spoiled by spoil if given.
func modelProject(t *testing.T, spoil func(dir string)) *app.App {
	t.Helper()
	vocab := bertgen.Vocab()
	return modelProjectShape(t, bertgen.Small(len(vocab)), spoil)
}

func modelProjectShape(t *testing.T, shape bertgen.Shape, spoil func(dir string)) *app.App {
	t.Helper()
	p := newProject(t)
	p.script(t, "forecast", "#!/bin/sh\n# @description Forecast for a city over the next days.\n# @readonly\necho ok\n")
	p.script(t, "notes", "#!/bin/sh\n# @description Write a note for tomorrow.\necho ok\n")
	dir := filepath.Join(p.dir, "models", "tiny")
	vocab := bertgen.Vocab()
	if err := (bertgen.Folder{Weights: bertgen.Random(shape, 3), Vocab: vocab, Pooling: "mean", Normalize: true}).Write(dir); err != nil {
		t.Fatal(err)
	}
	if spoil != nil {
		spoil(dir)
	}
	// Two tools are too few for the self-check: the weight is set.
	p.file(t, "agent-tools.yaml", "index:\n  semantic:\n    model: ./models/tiny\n    weight: 1\n  embeddings:\n    cache: "+filepath.Join(p.dir, "vectors.bin")+"\n")
	a, err := app.New(context.Background(), app.Options{ProjectDir: p.dir, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func doctorLine(a *app.App) string {
	for _, d := range a.Diagnostics() {
		if d.Provider == "index" && d.Item == "embeddings" {
			return d.Status + " " + d.Reason
		}
	}
	return ""
}

// TestModelFolderFromConfig: index.semantic.model installs the in-process
// model as the semantic stage: tools embedded in the background, searches
// fused, doctor and runtime_status report it.
func TestModelFolderFromConfig(t *testing.T) {
	a := modelProject(t, nil)
	st, ok := a.Registry().Semantic().(*embedding.Store)
	if !ok {
		t.Fatalf("semantic stage %T, want *embedding.Store", a.Registry().Semantic())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := doctorLine(a); !strings.HasPrefix(got, "ok embeddings: ") || !strings.Contains(got, "tools embedded; fusion weight 1") {
		t.Errorf("doctor: %q", got)
	}
	if e := a.Status().Embeddings; e == nil || e.Embedded != e.Tools || e.Tools < 2 || e.FusionWeight != 1 {
		t.Errorf("runtime_status embeddings: %+v", e)
	}
	if _, err := st.Similar("a note for tomorrow", index.Options{}, 2); err != nil {
		t.Errorf("the model's ranking: %v", err)
	}
	if hs := a.Registry().Search("forecast city", index.Options{}); len(hs) == 0 {
		t.Error("no hits")
	}
}

// TestModelFolderWarmUpIsLexical: the app starts without waiting for the
// model (the MiniLM-L6 shape: it loads and embeds for seconds), and a
// search meanwhile is the lexical ranking at the lexical path's speed.
func TestModelFolderWarmUpIsLexical(t *testing.T) {
	start := time.Now()
	a := modelProjectShape(t, bertgen.MiniLM(), nil)
	t.Logf("app started in %v", time.Since(start))
	st := a.Registry().Semantic().(*embedding.Store)
	t0 := time.Now()
	hs := a.Registry().Search("forecast city", index.Options{Explain: true})
	took := time.Since(t0)
	if s := st.Status(); s.Vectors == s.Docs {
		t.Skipf("the model embedded every tool before the first search (%+v): nothing to check", s)
	}
	if len(hs) == 0 || hs[0].ID != "forecast" || strings.Contains(hs[0].Why, "embeddings") {
		t.Errorf("search during the warm-up is not the lexical ranking: %+v", hs)
	}
	if took > 250*time.Millisecond {
		t.Errorf("a search during the warm-up took %v", took)
	}
}

// TestModelFolderMalformedFallsBack: a model folder that does not load
// (a model.onnx that is not ONNX; a folder that does not exist) is a
// doctor line naming the folder and the reason, and searches stay
// lexical.
func TestModelFolderMalformedFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(dir string)
		status string
		want   string
	}{
		{"not onnx", func(dir string) { must(os.WriteFile(filepath.Join(dir, "model.onnx"), []byte("garbage"), 0o644)) }, "warning", "model.onnx: not an ONNX model"},
		{"missing", func(dir string) { must(os.RemoveAll(dir)) }, "failed", "no such file or directory"},
		{"no tokenizer", func(dir string) { must(os.Remove(filepath.Join(dir, "tokenizer.json"))) }, "failed", "no tokenizer.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := modelProject(t, tc.spoil)
			deadline := time.Now().Add(time.Minute)
			for !strings.HasPrefix(doctorLine(a), tc.status) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			got := doctorLine(a)
			if !strings.HasPrefix(got, tc.status) || !strings.Contains(got, tc.want) || !strings.Contains(got, filepath.Join("models", "tiny")) {
				t.Errorf("doctor: %q, want %s naming the folder and %q", got, tc.status, tc.want)
			}
			if hs := a.Registry().Search("forecast city", index.Options{Explain: true}); len(hs) == 0 || hs[0].ID != "forecast" || strings.Contains(hs[0].Why, "embeddings") {
				t.Errorf("search is not the lexical ranking: %+v", hs)
			}
		})
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
