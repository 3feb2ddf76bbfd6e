package app_test

import (
	"os"
	"testing"

	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestMain keeps upstream tool-list caches and embeddings out of the
// user's cache directory.
// Scripts run in child processes of this test binary, as in the server.
func TestMain(m *testing.M) {
	jsrun.MaybeChild()
	os.Exit(testutil.RunIsolated(m))
}

func TestUserDirsIsolated(t *testing.T) { testutil.CheckIsolated(t) }
