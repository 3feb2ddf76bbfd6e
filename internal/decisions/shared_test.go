package decisions

import (
	"context"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
)

// TestSharedDecisions: with shared state, an "always allow" given on one
// replica holds on another, a revoke on any reaches all, and session
// decisions stay on their replica.
func TestSharedDecisions(t *testing.T) {
	srv := redistest.Start(t)
	tool := catalog.Tool{Provider: "gh", Name: "create_issue", Canonical: "gh_create_issue"}
	other := catalog.Tool{Provider: "jira", Name: "create_issue", Canonical: "gh_create_issue"} // the name reused by another provider
	stores := make([]*Store, 2)
	for i := range stores {
		r, err := state.NewRedis(srv.URL, "dec-test:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		stores[i], _ = Open("", nil)
		stores[i].Share(r)
	}
	a, b := stores[0], stores[1]
	a.Remember(tool, "s1", policy.ApprovedAlways)
	if !b.Allowed(tool, "s9") {
		t.Fatal("an always-allow from replica a does not hold on replica b")
	}
	if b.Allowed(other, "s9") {
		t.Fatal("a decision applied to another provider's tool of the same name")
	}
	a.Remember(catalog.Tool{Provider: "gh", Canonical: "gh_merge"}, "s1", policy.ApprovedForSession)
	if b.Allowed(catalog.Tool{Provider: "gh", Canonical: "gh_merge"}, "s1") {
		t.Error("a session decision left its replica")
	}
	if found, err := b.Revoke("gh_create_issue"); !found || err != nil {
		t.Fatalf("revoke on b: %v %v", found, err)
	}
	if a.Allowed(tool, "s1") {
		t.Error("a revoke on b did not reach a")
	}
	if got := a.Where(); got != "shared state (server.redis)" {
		t.Errorf("Where = %q", got)
	}
	// Garbage in the shared record is never applied.
	r, _ := state.NewRedis(srv.URL, "dec-test:")
	defer r.Close()
	if err := r.Put(context.Background(), sharedKey, []byte(`{"version":1,"decisions":[{"tool":"gh_create_issue"}]}`), 0); err != nil {
		t.Fatal(err)
	}
	if a.Allowed(tool, "s1") {
		t.Error("a malformed shared record was applied")
	}
}
