package facade_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/policy"
)

// A profile's facade publishes only its view; a call outside it is never
// reached by name.
func TestProfileView(t *testing.T) {
	access := policy.NewAccess(map[string]policy.View{"ro": {Providers: []string{"gh"}, Tools: policy.Rules{Allow: []string{"gh_get_*", "gh_list*"}}}}, nil)
	h := newHarness(t, setup{mode: facade.Flat, profile: "ro", access: access})
	names := h.names()
	if slices.Contains(names, "gh_delete_repo") || !slices.Contains(names, "gh_get_repo") {
		t.Fatalf("profile ro lists %v", names)
	}
	if _, env := h.call("gh_delete_repo", map[string]any{"owner": "a", "repo": "b", "agent_tools_confirm": true}); env == nil {
		t.Fatal("a tool outside the profile ran")
	}
	if text, env := h.call("gh_get_repo", map[string]any{"owner": "a", "repo": "b"}); env != nil || !strings.Contains(text, "get_repo") {
		t.Fatalf("in-view call: %s %v", text, env)
	}
}

// Per-identity rules hide what the caller may not call from tools/list
// (flat: by tool; progressive: a provider with nothing visible) and the
// policy stage refuses it.
func TestIdentityRulesHideTools(t *testing.T) {
	deny := func(globs ...string) *policy.Access {
		return policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{"process:*"}, Rules: policy.Rules{Deny: globs}}})
	}
	h := newHarness(t, setup{mode: facade.Flat, access: deny("gh_delete_*")})
	names := h.names()
	if slices.Contains(names, "gh_delete_repo") || !slices.Contains(names, "gh_get_repo") {
		t.Fatalf("flat lists %v", names)
	}
	if _, env := h.call("gh_delete_repo", map[string]any{"owner": "a", "repo": "b", "agent_tools_confirm": true}); env == nil || env["code"] != "DENIED" {
		t.Fatalf("denied call: %v", env)
	}

	p := newHarness(t, setup{access: deny("gh_*")})
	for _, n := range p.names() {
		if strings.HasPrefix(n, "agent_tools_gh_") {
			t.Fatalf("progressive lists %v for an identity denied every gh tool", p.names())
		}
	}
	other := newHarness(t, setup{access: policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{"token:*"}, Rules: policy.Rules{Deny: []string{"gh_*"}}}})})
	if !slices.Contains(other.names(), "agent_tools_gh_call") {
		t.Fatalf("a rule for other identities hid tools: %v", other.names())
	}
}
