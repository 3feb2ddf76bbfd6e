package jsrun

import (
	"os"
	"testing"
)

// TestMain lets the pool re-execute this test binary as a script's child.
func TestMain(m *testing.M) {
	MaybeChild()
	os.Exit(m.Run())
}
