package kinds_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/kinds"
	"github.com/agent-tools/agent-tools/internal/tests/configtest"
)

// TestKindsRegistered: the config accepts exactly the listed kinds under
// providers:, in the list's order (the order its messages name them in),
// the runtime's own (builtin, local) are built from their sections by the
// same provider.Build, and a kind it accepts but has no builder for is
// refused by provider.Build, not by a panic.
func TestKindsRegistered(t *testing.T) {
	var names, own []string
	for _, k := range kinds.All {
		if k.Section != "" {
			own = append(own, k.Name)
			continue
		}
		names = append(names, k.Name)
	}
	if want := []string{"mcp", "openapi", "cli", "workers"}; !slices.Equal(names, want) {
		t.Errorf("kinds.All = %v, want %v", names, want)
	}
	if want := []string{"builtin", "local"}; !slices.Equal(own, want) {
		t.Errorf("the runtime's own kinds = %v, want %v", own, want)
	}
	if got := config.KindNames(); !slices.Equal(got, names) {
		t.Errorf("config.KindNames() = %v, want %v", got, names)
	}
	c := &config.Config{Local: config.Local{Enabled: true, Dir: t.TempDir(), Description: "Scripts"}}
	for _, pc := range c.HostEntries(true) {
		p, err := provider.Build(pc, provider.Deps{})
		if err != nil {
			t.Fatalf("building %s: %v", pc.ID, err)
		}
		if info := p.Info(); info.ID != pc.ID || info.Kind != pc.Kind || !info.HostLocal {
			t.Errorf("%s built as %+v", pc.ID, info)
		}
		if pc.ID == "local" && p.Info().Description != "Scripts" {
			t.Errorf("local's description %q, want the section's", p.Info().Description)
		}
	}
	if got := len(c.HostEntries(false)); got != 1 {
		t.Errorf("without built-ins, %d host entries, want local alone", got)
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

// TestOwnKindsNotUnderProviders: builtin and local are configured by their
// sections; an entry of providers: that names them says where.
func TestOwnKindsNotUnderProviders(t *testing.T) {
	for _, kind := range []string{"builtin", "local"} {
		_, err := configtest.Parse(t, "providers:\n  - id: x\n    kind: "+kind+"\n")
		if err == nil || !strings.Contains(err.Error(), "the runtime's own: configure it under") {
			t.Errorf("kind %s under providers: %v", kind, err)
		}
	}
}
