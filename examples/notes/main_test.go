package notes_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain gives the runtime a cache and state directory of the test's own,
// so that nothing it keeps (tool-list caches, embeddings) lands in the
// user's. This module cannot import the repository's test helpers (they
// are internal), so it does by hand what they do.
func TestMain(m *testing.M) {
	if os.Getenv("GOCACHE") == "" { // go test's build cache stays where it was
		if dir, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(dir, "go-build"))
		}
	}
	dir, err := os.MkdirTemp("", "agent-tools-notes-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
