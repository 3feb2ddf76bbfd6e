//go:build !onnx

package app_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/embedding/localmodel"
	"github.com/agent-tools/agent-tools/internal/index"
)

// TestModelFolderNeedsTheTag: in a binary built without -tags onnx,
// index.semantic.model is a doctor failure that says how to build with
// the model runtime, and search stays lexical.
func TestModelFolderNeedsTheTag(t *testing.T) {
	p := newProject(t)
	p.script(t, "forecast", "#!/bin/sh\n# @description Forecast for a city over the next days.\n# @readonly\necho ok\n")
	p.file(t, "agent-tools.yaml", "index:\n  semantic:\n    model: ./models/bge-small\n")
	a, err := app.New(context.Background(), app.Options{ProjectDir: p.dir, AuditDefault: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if s := a.Registry().Semantic(); s != nil {
		t.Errorf("semantic stage %T installed without the runtime", s)
	}
	found := false
	for _, d := range a.Diagnostics() {
		if d.Provider == "index" && d.Item == "embeddings" {
			found = true
			if d.Status != "failed" || !strings.Contains(d.Reason, localmodel.BuildCommand) {
				t.Errorf("doctor: %s %s", d.Status, d.Reason)
			}
		}
	}
	if !found {
		t.Error("doctor has no index embeddings line")
	}
	if hs := a.Registry().Search("weather forecast", index.Options{}); len(hs) == 0 || hs[0].ID != "forecast" {
		t.Errorf("lexical search: %+v", hs)
	}
}
