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
