package facade_test

import (
	"context"
	"testing"

	"github.com/agent-tools/agent-tools/internal/facade"
)

// The passthrough itself is tested in internal/passthrough; this checks the
// facade's wiring of it when nothing is forwarded.

func TestPassthroughNoUpstreamAdvertisesNothingExtra(t *testing.T) {
	h := newHarness(t, setup{mode: facade.Flat, version: "2025-11-25"})
	caps := h.cs.InitializeResult().Capabilities
	if caps.Resources != nil || caps.Completions != nil || caps.Logging != nil {
		t.Errorf("without a passthrough provider: capabilities = %+v", caps)
	}
	if _, err := h.cs.ListResources(context.Background(), nil); err != nil {
		t.Errorf("resources/list without a passthrough: %v", err)
	}
}
