package app_test

import (
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
)

// The defaults the config documents are the ones scripts get.
func TestCodeLimitDefaults(t *testing.T) {
	if config.DefaultCodeMemory != jsrun.DefaultMemory || jsrun.DefaultCPU != 10*time.Second || builtin.DefaultCodeTimeout != 30*time.Second {
		t.Fatalf("config says %d bytes; jsrun %d bytes, %s of CPU; builtin %s", config.DefaultCodeMemory, jsrun.DefaultMemory, jsrun.DefaultCPU, builtin.DefaultCodeTimeout)
	}
}
