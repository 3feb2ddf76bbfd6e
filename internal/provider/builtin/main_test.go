package builtin

import (
	"os"
	"testing"

	"github.com/agent-tools/agent-tools/internal/jsrun"
)

// TestMain lets scripts run in child processes of this test binary.
func TestMain(m *testing.M) {
	jsrun.MaybeChild()
	os.Exit(m.Run())
}
