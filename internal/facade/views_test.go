package facade_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
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
	if _, env := h.call("gh_delete_repo", map[string]any{"owner": "a", "repo": "b", "agent_tools_confirm": true}); env == nil || env["code"] != "UNKNOWN_TOOL" {
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

// Search, discover, help and a script's tools.search show a caller only
// what its identity's rules let it call: the same tool is absent for the
// identity a rule denies it to and present for another.
func TestIdentityRulesFilterSearch(t *testing.T) {
	rule := func(identity string) *policy.Access {
		return policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{identity}, Rules: policy.Rules{Deny: []string{"gh_delete_*"}}}})
	}
	tests := []struct {
		name     string
		identity string // the rule's; the harness's caller is process:<pid>
		visible  bool
	}{
		{"denied to this caller", "process:*", false},
		{"denied to another identity", "token:*", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHarness(t, setup{mode: facade.Search, access: rule(tt.identity)})
			text, e := s.call("agent_tools_search", map[string]any{"query": "delete a repository"})
			if e != nil || strings.Contains(text, `"gh_delete_repo"`) != tt.visible || !strings.Contains(text, "gh_get_repo") {
				t.Errorf("search: %s %v", text, e)
			}
			help, _ := s.call("agent_tools_help", map[string]any{})
			want := `"tools":2`
			if tt.visible {
				want = `"tools":3`
			}
			if !strings.Contains(help, want) {
				t.Errorf("help counts, want %s: %s", want, help)
			}

			p := newHarness(t, setup{access: rule(tt.identity)})
			for _, args := range []map[string]any{{}, {"query": "delete a repository"}} {
				text, e := p.call("agent_tools_gh_discover", args)
				if e != nil || strings.Contains(text, `"delete_repo"`) != tt.visible {
					t.Errorf("discover %v: %s %v", args, text, e)
				}
			}

			ca := policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{tt.identity}, Rules: policy.Rules{Deny: []string{"weather_send_*"}}}})
			c, _ := newCodeHarnessWith(t, facade.Code, policy.Rules{}, ca, builtin.Options{})
			text, e = c.call("execute_javascript", map[string]any{"code": `return tools.search("send a weather alert").map(t => t.name)`})
			if e != nil || strings.Contains(text, "weather_send_alert") != tt.visible || !strings.Contains(text, "weather_") {
				t.Errorf("a script's search: %s %v", text, e)
			}
		})
	}
}

// A provider's call tool names its tools when the caller sees few of
// them, whatever the provider holds: a rule that hides all but a few
// lists those few, none hidden lists none (too many to name).
func TestCallNamesWhatTheCallerSees(t *testing.T) {
	var tools []catalog.Tool
	for i := range 20 {
		tools = append(tools, providertest.Tool(fmt.Sprintf("op%02d", i), "An operation.", repoSchema, true))
	}
	big := func() provider.Provider {
		return providertest.New(catalog.ProviderInfo{ID: "big", Kind: "fake", Description: "Many operations"}, tools...)
	}
	tests := []struct {
		name  string
		rules policy.Rules
		want  string // in the description; "" = no list
	}{
		{"nothing hidden", policy.Rules{}, ""},
		{"all but three denied", policy.Rules{Deny: []string{"big_op1*", "big_op0[3-9]"}}, " Tools: op00, op01, op02."},
		{"allow list of two", policy.Rules{Allow: []string{"gh_*", "big_op05", "big_op17"}}, " Tools: op05, op17."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{rules: tt.rules, extra: []provider.Provider{big()}})
			res, err := h.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range res.Tools {
				if tool.Name != "agent_tools_big_call" {
					continue
				}
				if got := strings.Contains(tool.Description, " Tools: "); got != (tt.want != "") || tt.want != "" && !strings.HasSuffix(tool.Description, tt.want) {
					t.Fatalf("description %q, want %q", tool.Description, tt.want)
				}
				return
			}
			t.Fatal("no agent_tools_big_call listed")
		})
	}
}
