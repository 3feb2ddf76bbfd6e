package app

import (
	"slices"
	"sort"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

// TestEveryKindBuilds: every kind the config accepts has a builder in this
// binary, and no builder serves a kind the config does not know — so a kind
// can never be "accepted by the config but not available in this build".
func TestEveryKindBuilds(t *testing.T) {
	var built []string
	for k := range builders {
		built = append(built, k)
	}
	sort.Strings(built)
	accepted := slices.Clone(config.Kinds)
	sort.Strings(accepted)
	if !slices.Equal(built, accepted) {
		t.Fatalf("config kinds %v, builders %v: add the missing line to builders (internal/app/kinds.go)", accepted, built)
	}
}
