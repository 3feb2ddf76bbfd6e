package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage: docs/architecture.md is the house
// plan; a package it does not name is a room nobody can find. Every
// directory directly under internal/ (and under internal/provider/, one
// package per kind) must appear in the plan's package table, as
// `internal/x` or as `x` in backquotes.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	plan := string(doc)
	var missing []string
	for _, dir := range []string{"internal", filepath.Join("internal", "provider")} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() || e.Name() == "testdata" {
				continue
			}
			path := filepath.ToSlash(filepath.Join(dir, e.Name()))
			if !strings.Contains(plan, "`"+path) && !strings.Contains(plan, "`"+e.Name()+"`") {
				missing = append(missing, path)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/architecture.md does not name %s: add a row to its package table", strings.Join(missing, ", "))
	}
}
