package openapi

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain keeps the tests' document and tool caches out of the user's
// cache directory (os.UserCacheDir reads XDG_CACHE_HOME), while the go
// command the PocketBase test runs keeps its usual build cache.
func TestMain(m *testing.M) {
	if os.Getenv("GOCACHE") == "" {
		if orig, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(orig, "go-build"))
		}
	}
	dir, err := os.MkdirTemp("", "openapi-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
