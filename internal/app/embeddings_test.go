package app_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/embedding"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/tests/embedtest"
)

// TestEmbeddingsFromConfig: index.embeddings in the config installs the
// semantic stage on the registry (discover, search and the CLI share it),
// and doctor reports it; a failing endpoint is a warning, never a failure.
func TestEmbeddingsFromConfig(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	p := newProject(t)
	p.script(t, "forecast", "#!/bin/sh\n# @description Forecast for a city over the next days.\n# @readonly\necho ok\n")
	p.script(t, "notes", "#!/bin/sh\n# @description Write a note for tomorrow.\necho ok\n")
	// Two tools are too few for the self-check: the weight is set.
	p.file(t, "agent-tools.yaml", "index:\n  semantic:\n    weight: 1\n  embeddings:\n    url: "+srv.URL+"/api/embed\n    model: fake\n    cache: "+filepath.Join(p.dir, "vectors.bin")+"\n")
	a, err := app.New(context.Background(), app.Options{ProjectDir: p.dir, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, ok := a.Registry().Semantic().(*embedding.Store)
	if !ok {
		t.Fatalf("semantic stage %T, want *embedding.Store", a.Registry().Semantic())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range a.Registry().Search("will it rain", index.Options{Explain: true}) {
		found = found || (h.ID == "forecast" && strings.Contains(h.Why, "embeddings"))
	}
	if !found {
		t.Errorf("search did not use the embeddings: %+v", a.Registry().Search("will it rain", index.Options{Explain: true}))
	}
	line := func() string {
		for _, d := range a.Diagnostics() {
			if d.Provider == "index" && d.Item == "embeddings" {
				return d.Status + " " + d.Reason
			}
		}
		return ""
	}
	if got := line(); !strings.HasPrefix(got, "ok embeddings:") || !strings.Contains(got, "fusion weight 1 (index.semantic.weight") {
		t.Errorf("doctor: %q", got)
	}
	if e := a.Status().Embeddings; e == nil || e.FusionWeight != 1 || e.WeightFrom != embedding.WeightConfig || e.Embedded != e.Tools || e.Tools < 2 {
		t.Errorf("runtime_status embeddings: %+v", e)
	}
	srv.Fail.Store(true)
	a.Registry().Search("something never asked before", index.Options{})
	if got := line(); !strings.HasPrefix(got, "warning embeddings unavailable") {
		t.Errorf("doctor after a failure: %q", got)
	}
}

// TestEmbeddingsSelfCheckInStatus: without index.semantic.weight the
// runtime measures the model on the catalog; runtime_status and doctor
// show the choice and its figures (two tools: too few to trust the model,
// so the lexical ranking alone).
func TestEmbeddingsSelfCheckInStatus(t *testing.T) {
	srv := embedtest.New()
	defer srv.Close()
	p := newProject(t)
	p.script(t, "forecast", "#!/bin/sh\n# @description Forecast for a city over the next days.\n# @readonly\necho ok\n")
	p.script(t, "notes", "#!/bin/sh\n# @description Write a note for tomorrow.\necho ok\n")
	p.file(t, "agent-tools.yaml", "index:\n  embeddings:\n    url: "+srv.URL+"/api/embed\n    model: fake\n    cache: "+filepath.Join(p.dir, "vectors.bin")+"\n")
	a, err := app.New(context.Background(), app.Options{ProjectDir: p.dir, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st := a.Registry().Semantic().(*embedding.Store)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	e := a.Status().Embeddings
	if e == nil || e.WeightFrom != embedding.WeightSelfCheck || e.FusionWeight != 0 || e.SelfCheck == nil || e.SelfCheck.Tools != e.Tools || len(e.SelfCheck.Fused) == 0 {
		t.Fatalf("runtime_status embeddings: %+v", e)
	}
	for _, d := range a.Diagnostics() {
		if d.Provider == "index" && d.Item == "embeddings" && !strings.Contains(d.Reason, "self-check on") {
			t.Errorf("doctor: %q", d.Reason)
		}
	}
}
