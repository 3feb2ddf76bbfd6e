package policy

import (
	"testing"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestAccess(t *testing.T) {
	a := NewAccess(map[string]View{
		"ops":  {Providers: []string{"gh", "k8s"}, Tools: Rules{Deny: []string{"k8s.delete_*"}}},
		"read": {Tools: Rules{Allow: []string{"*.get_*", "*.list_*"}}},
	}, []IdentityRule{
		{Identities: []string{"token:aaaa*"}, Rules: Rules{Deny: []string{"gh.*"}}},
		{Identities: []string{"oidc:https://idp|*"}, Profiles: []string{"ops"}, Rules: Rules{Allow: []string{"k8s.*"}, Confirm: ConfirmHuman}},
		{Profiles: []string{"default"}, Rules: Rules{Deny: []string{"local.rm"}, Confirm: ConfirmToken}},
	})
	tests := []struct {
		name              string
		identity, profile string
		provider, tool    string
		allowed           bool
		confirm           ConfirmMode // with default agent
	}{
		{"default profile, no identity rule", "token:bbbb0000", "", "gh", "gh.create_issue", true, ConfirmToken},
		{"default profile rule deny", "token:bbbb0000", "default", "local", "local.rm", false, ConfirmToken},
		{"identity rule deny", "token:aaaa0000", "", "gh", "gh.create_issue", false, ConfirmToken},
		{"identity rule other provider", "token:aaaa0000", "", "k8s", "k8s.get_pods", true, ConfirmToken},
		{"profile keeps its providers", "token:bbbb0000", "ops", "local", "local.ls", false, ConfirmAgent},
		{"profile tools deny", "token:bbbb0000", "ops", "k8s", "k8s.delete_pod", false, ConfirmAgent},
		{"profile in view", "token:bbbb0000", "ops", "gh", "gh.create_issue", true, ConfirmAgent},
		{"identity rule in profile", "token:aaaa0000", "ops", "gh", "gh.create_issue", false, ConfirmAgent},
		{"oidc rule allow list is exhaustive", "oidc:https://idp|alice", "ops", "gh", "gh.create_issue", false, ConfirmHuman},
		{"oidc rule allow", "oidc:https://idp|alice", "ops", "k8s", "k8s.get_pods", true, ConfirmHuman},
		{"oidc rule only in its profile", "oidc:https://idp|alice", "", "gh", "gh.create_issue", true, ConfirmToken},
		{"other issuer", "oidc:https://evil|alice", "ops", "gh", "gh.create_issue", true, ConfirmAgent},
		{"read profile allow", "process:1", "read", "gh", "gh.get_issue", true, ConfirmAgent},
		{"read profile not allowed", "process:1", "read", "gh", "gh.create_issue", false, ConfirmAgent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // the second time from the cache
				g := a.For(tt.identity, "", tt.profile)
				err := g.check(tt.provider, tt.tool)
				if (err == nil) != tt.allowed || g.Visible(tt.provider, tt.tool) != tt.allowed {
					t.Fatalf("Check = %v, Visible = %v, want allowed %v", err, g.Visible(tt.provider, tt.tool), tt.allowed)
				}
				if err != nil && err.Code != toolerr.Denied {
					t.Fatalf("code = %s", err.Code)
				}
				if got := g.Confirm(ConfirmAgent); got != tt.confirm {
					t.Fatalf("confirm = %q, want %q", got, tt.confirm)
				}
			}
		})
	}
	if !a.HasProfile("ops") || a.HasProfile("default") || len(a.Profiles()) != 2 {
		t.Fatalf("profiles = %v", a.Profiles())
	}
}

func TestAccessEmpty(t *testing.T) {
	var a *Access
	g := a.For("token:x", "", "ops")
	if !g.Open() || g.check("gh", "gh.x") != nil || g.Confirm(ConfirmHuman) != ConfirmHuman {
		t.Fatal("a nil Access must grant everything")
	}
}

func TestAccessBoundedCache(t *testing.T) {
	a := NewAccess(nil, []IdentityRule{{Rules: Rules{Deny: []string{"x.*"}}}})
	for i := range maxGrants + 10 {
		a.For(string(rune('a'+i%26))+string(rune(i)), "", "")
	}
	if len(a.cache) > maxGrants {
		t.Fatalf("cache holds %d grants, bound is %d", len(a.cache), maxGrants)
	}
}

func BenchmarkAccessFor(b *testing.B) {
	a := NewAccess(map[string]View{"ops": {Providers: []string{"gh"}}}, []IdentityRule{{Identities: []string{"token:*"}, Rules: Rules{Deny: []string{"gh.delete_*"}}}})
	b.ReportAllocs()
	for b.Loop() {
		if err := a.For("token:abcd0123", "", "ops").check("gh", "gh.create_issue"); err != nil {
			b.Fatal(err)
		}
	}
}
