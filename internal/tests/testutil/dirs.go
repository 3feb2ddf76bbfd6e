package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// IsolateUserDirs points the user cache and state directories at a fresh
// temporary directory for the rest of the test binary: os.UserCacheDir
// reads XDG_CACHE_HOME, so upstream tool-list caches, fetched OpenAPI
// documents and embeddings never land in the real ~/.cache/agent-tools.
// The go command a test runs keeps the build cache it had (GOCACHE is
// pinned first). The returned function removes the directory.
func IsolateUserDirs() (func(), error) {
	if os.Getenv(isolatedVar) != "" {
		return func() {}, nil // a test binary re-run as a command by its own test: its parent did it
	}
	if os.Getenv("GOCACHE") == "" {
		if orig, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(orig, "go-build"))
		}
	}
	dir, err := os.MkdirTemp("", "agent-tools-test-home-")
	if err != nil {
		return nil, err
	}
	for k, sub := range map[string]string{"XDG_CACHE_HOME": "cache", "XDG_STATE_HOME": "state"} {
		p := filepath.Join(dir, sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		os.Setenv(k, p)
	}
	os.Setenv(isolatedVar, dir)
	// Nor the user's keyring: the upstream token store keeps its key in a
	// file, and no session bus reaches the desktop's Secret Service (tests
	// of the keyring start their own: internal/tests/secretstest).
	os.Setenv("AGENT_TOOLS_TOKEN_KEY", "file")
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", "disabled:")
	return func() { os.RemoveAll(dir) }, nil
}

// isolatedVar marks a process whose user directories IsolateUserDirs set.
const isolatedVar = "AGENT_TOOLS_TEST_DIRS"

// RunIsolated is a TestMain body: m.Run with IsolateUserDirs.
//
//	func TestMain(m *testing.M) { os.Exit(testutil.RunIsolated(m)) }
func RunIsolated(m *testing.M) int {
	cleanup, err := IsolateUserDirs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "isolating the user directories:", err)
		return 1
	}
	defer cleanup()
	return m.Run()
}

// CheckIsolated fails t when the user cache directory is not a test's
// own (a package whose TestMain forgot RunIsolated).
func CheckIsolated(t testing.TB) {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	if home != "" && isUnder(dir, home) && !isUnder(dir, os.TempDir()) {
		t.Fatalf("the user cache directory is the real one (%s): the package's TestMain must use testutil.RunIsolated", dir)
	}
}

func isUnder(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}
