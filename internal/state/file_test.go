package state

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.json")
	stampOf := func() Stamp {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return StampOf(fi)
	}
	tests := []struct{ name, data string }{
		{"new file", "{}\n"},
		{"replaced", `{"version":1}` + "\n"},
		{"emptied", ""},
	}
	var prev Stamp
	for _, tt := range tests {
		if err := WriteFile(path, []byte(tt.data)); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != tt.data {
			t.Fatalf("%s: read %q, %v; want %q", tt.name, got, err, tt.data)
		}
		if cur := stampOf(); cur == prev {
			t.Errorf("%s: the stamp did not change", tt.name)
		} else {
			prev = cur
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x.json"), nil); err == nil {
		t.Error("a missing directory is not created: want an error")
	}
}

// TestWriteFilePerm: the file gets the mode asked for (a config a person
// edits keeps 0644), WriteFile's is private, and a failed write leaves the
// old content and no temporary file.
func TestWriteFilePerm(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		perm os.FileMode
	}{{"private", 0o600}, {"config", 0o644}, {"read-only", 0o400}} {
		path := filepath.Join(dir, tt.name)
		if err := WriteFilePerm(path, []byte("x"), tt.perm); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != tt.perm {
			t.Errorf("%s: mode %v, %v; want %v", tt.name, fi.Mode().Perm(), err, tt.perm)
		}
	}
	path := filepath.Join(dir, "store.json")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("WriteFile made %v, want 0600", fi.Mode().Perm())
	}
	// A directory in the file's place: the rename fails, nothing is lost.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "child"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(blocked, []byte("new")); err == nil {
		t.Error("replacing a non-empty directory succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("old content %q", got)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name()[0] == '.' {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
