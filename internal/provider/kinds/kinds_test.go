package kinds_test

import (
	"slices"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/kinds"
)

// TestKindsRegistered: the config accepts exactly the listed kinds, in the
// list's order (the order its messages name them in), and a kind it accepts
// but has no builder for is refused by provider.Build, not by a panic.
func TestKindsRegistered(t *testing.T) {
	var names []string
	for _, k := range kinds.All {
		names = append(names, k.Name)
	}
	if want := []string{"mcp", "openapi", "cli", "workers"}; !slices.Equal(names, want) {
		t.Errorf("kinds.All = %v, want %v", names, want)
	}
	if got := config.KindNames(); !slices.Equal(got, names) {
		t.Errorf("config.KindNames() = %v, want %v", got, names)
	}
	if _, err := provider.Build(config.Provider{ID: "x", Kind: "nope"}, provider.Deps{}); err == nil {
		t.Error("an unknown kind built")
	}
}

// TestRegisterTwicePanics: a kind's name is its identity.
func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering mcp twice did not panic")
		}
	}()
	provider.RegisterKind(kinds.All[0])
}
