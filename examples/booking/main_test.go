package main

import (
	"os"
	"testing"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestMain keeps upstream tool-list caches and embeddings out of the
// user's cache directory.
func TestMain(m *testing.M) { os.Exit(testutil.RunIsolated(m)) }

func TestUserDirsIsolated(t *testing.T) { testutil.CheckIsolated(t) }
