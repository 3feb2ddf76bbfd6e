package decisions

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/state"
	"github.com/agent-tools/agent-tools/internal/tests/redistest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// sharedKeyBytes is the key the replicas of these tests seal with.
var sharedKeyBytes = []byte("decisions-test-key-0123456789abcdef")

// TestSharedDecisions: with shared state, an "always allow" given on one
// replica holds on another, for the identity it was given for only; a
// revoke on any reaches all; session decisions stay on their replica; a
// shared record that does not verify (written without the cluster key)
// is never applied, and is logged naming its key only.
func TestSharedDecisions(t *testing.T) {
	srv := redistest.Start(t)
	tool := catalog.Tool{Provider: "gh", Name: "create_issue", Canonical: "gh_create_issue", Digest: "d1"}
	other := catalog.Tool{Provider: "jira", Name: "create_issue", Canonical: "gh_create_issue", Digest: "d1"} // the name reused by another provider
	var logs testutil.SyncBuffer
	stores := make([]*Store, 2)
	for i := range stores {
		r, err := state.NewRedis(srv.URL, "dec-test:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		stores[i], _ = Open("", nil)
		stores[i].Share(state.NewSigned(r, sharedKeyBytes, slog.New(slog.NewTextHandler(&logs, nil))))
	}
	a, b := stores[0], stores[1]
	alice, bob := in("s1"), pipeline.DecisionScope{Identity: "token:bob", Session: "s9"}
	a.Remember(tool, alice, policy.ApprovedAlways)
	if !b.Allowed(tool, in("s9")) {
		t.Fatal("an always-allow from replica a does not hold on replica b")
	}
	if b.Allowed(tool, bob) || a.Allowed(tool, bob) {
		t.Fatal("alice's always-allow answered for bob")
	}
	if b.Allowed(other, in("s9")) {
		t.Fatal("a decision applied to another provider's tool of the same name")
	}
	changed := tool
	changed.Digest = "d2"
	if b.Allowed(changed, in("s9")) {
		t.Fatal("a decision applied to a changed definition")
	}
	a.Remember(catalog.Tool{Provider: "gh", Canonical: "gh_merge"}, alice, policy.ApprovedForSession)
	if b.Allowed(catalog.Tool{Provider: "gh", Canonical: "gh_merge"}, alice) {
		t.Error("a session decision left its replica")
	}
	if found, err := b.Revoke("gh_create_issue"); !found || err != nil {
		t.Fatalf("revoke on b: %v %v", found, err)
	}
	if a.Allowed(tool, alice) {
		t.Error("a revoke on b did not reach a")
	}
	if got := a.Where(); got != "shared state (server.redis)" {
		t.Errorf("Where = %q", got)
	}

	// Written without the cluster key: never applied, whatever it says.
	r, _ := state.NewRedis(srv.URL, "dec-test:")
	defer r.Close()
	for _, forged := range []string{
		`{"version":1,"decisions":[{"tool":"gh_create_issue","provider":"gh"}]}`,
		`{"version":2,"decisions":[{"tool":"gh_create_issue","provider":"gh","identity":"token:bob","digest":"d1"}]}`,
	} {
		if err := r.Put(context.Background(), sharedKey, []byte(forged), 0); err != nil {
			t.Fatal(err)
		}
		if a.Allowed(tool, bob) || b.Allowed(tool, bob) || a.Allowed(tool, alice) {
			t.Fatalf("a shared record written without the cluster key was applied: %s", forged)
		}
	}
	if n := strings.Count(logs.String(), "key=decisions:v1"); n < 1 || strings.Contains(logs.String(), "token:bob") {
		t.Fatalf("the refusal is logged naming the key, never the value:\n%s", logs.String())
	}
	// Sealed under another cluster key: refused too.
	another := state.NewSigned(r, bytes.Repeat([]byte("x"), 32), nil)
	if err := another.Put(context.Background(), sharedKey, []byte(`{"version":2,"decisions":[{"tool":"gh_create_issue","provider":"gh","identity":"token:bob","digest":"d1"}]}`), 0); err != nil {
		t.Fatal(err)
	}
	if a.Allowed(tool, bob) {
		t.Fatal("a record sealed under another cluster key was applied")
	}
	// Sealed, but malformed: never applied either.
	mine := state.NewSigned(r, sharedKeyBytes, nil)
	if err := mine.Put(context.Background(), sharedKey, []byte(`{"version":2,"decisions":[{"tool":"gh_create_issue"}]}`), 0); err != nil {
		t.Fatal(err)
	}
	if a.Allowed(tool, alice) {
		t.Error("a malformed shared record was applied")
	}
}
