package testutil

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"
)

// SnapExt is the extension of snapshot files.
const SnapExt = ".snap"

// Snapshots compares each item with its own readable file dir/<name>.snap
// (as github-mcp-server's toolsnaps do): one file per tool, so a change
// shows as a diff of that tool alone. It fails, naming the file, when an
// item's snapshot differs (with a unified diff), when one is missing, and
// when a snapshot exists for an item that is no longer there. With update
// set it writes the changed and missing files and removes the stale ones
// instead. Items are marshalled as indented JSON (map keys sorted).
func Snapshots(t testing.TB, dir string, update bool, items map[string]any) {
	t.Helper()
	names := make([]string, 0, len(items))
	for name := range items {
		names = append(names, name)
	}
	sort.Strings(names)
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		got, err := json.MarshalIndent(items[name], "", "  ")
		if err != nil {
			t.Fatalf("snapshot %s: %v", name, err)
		}
		Snapshot(t, filepath.Join(dir, name+SnapExt), update, append(got, '\n'))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+SnapExt))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), SnapExt)
		if _, ok := items[name]; ok {
			continue
		}
		if update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("snapshot %s is for %q, which no longer exists (run go test -update to remove it)", f, name)
	}
}

// Snapshot compares got with the file at path (writing it when update is set).
func Snapshot(t testing.TB, path string, update bool, got []byte) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("missing snapshot %s (run go test -update to create it): %v", path, err)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s changed (run go test -update if intended):\n%s", path, diff.Diff(path, want, "got", got))
	}
}
