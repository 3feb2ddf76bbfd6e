package facade_test

import (
	"os"
	"testing"

	"github.com/agent-tools/agent-tools/internal/jsrun"
)

// TestMain lets execute_javascript scripts run in child processes of this
// test binary, as they do in the server.
func TestMain(m *testing.M) {
	jsrun.MaybeChild()
	os.Exit(m.Run())
}
