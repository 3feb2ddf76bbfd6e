package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func gateRegistry(t *testing.T, tools ...catalog.Tool) (*registry.Registry, *providertest.Fake) {
	t.Helper()
	fake := providertest.New(catalog.ProviderInfo{ID: "db", RequireConfirm: true}, tools...)
	reg := registry.New(nil)
	if err := reg.Add(fake); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	return reg, fake
}

// A read-only script's call is decided on the tool the pipeline resolved:
// a mutating tool that was not in the catalog when the script started
// (written a moment ago, or added by an upstream in answer to a lookup) is
// refused all the same, not let through because a lookup missed.
func TestReadOnlyScriptDecidesOnTheResolvedTool(t *testing.T) {
	reg, fake := gateRegistry(t, providertest.Tool("read", "Read rows", schema, true))
	run := pipeline.New(pipeline.Options{Catalog: reg, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	// The tool appears only now; the next lookup's rescan finds it.
	fake.SetTools(providertest.Tool("read", "Read rows", schema, true), providertest.Tool("drop_table", "Drop a table", schema, false))
	script := policy.Caller{Identity: "process:1", Door: policy.DoorScript, ReadOnly: true, Run: "run1"}
	for range 2 { // twice: the second lookup hits the rescanned catalog
		resp := run(context.Background(), &pipeline.Request{Caller: script, Tool: "db_drop_table", Args: json.RawMessage(`{}`), Confirm: true})
		if resp.Err == nil || resp.Err.Code != toolerr.Denied || resp.Err.Details["reason"] != "read_only_script" {
			t.Fatalf("a read-only script dropped a table: %+v", resp.Err)
		}
	}
	if calls := fake.Calls(); len(calls) != 0 {
		t.Fatalf("the backend ran %v", calls)
	}
	// The same call from the model's own door is a normal mutating call.
	resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: "process:1", Door: policy.DoorMCP}, Tool: "db_drop_table", Args: json.RawMessage(`{}`), Confirm: true})
	if resp.Failed() {
		t.Fatalf("direct confirmed call: %+v", resp.Err)
	}
}

// Every answer is bounded: an 8 Mi-character name comes back clipped, not
// four times over.
func TestHugeNamesAreClipped(t *testing.T) {
	reg, _ := gateRegistry(t, providertest.Tool("read", "Read rows", schema, true))
	run := pipeline.New(pipeline.Options{Catalog: reg, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second, MaxResultChars: 20000}})
	huge := strings.Repeat("x", 8<<20)
	for _, req := range []*pipeline.Request{
		{Tool: huge},
		{Provider: "db", Tool: huge},
		{Provider: huge, Tool: "read"},
		{Skill: true, Provider: "db", Tool: huge},
	} {
		resp := run(context.Background(), req)
		if resp.Err == nil {
			t.Fatal("a huge name resolved")
		}
		if n := len(resp.Err.JSON()); n > 10000 {
			t.Fatalf("%s answer is %d bytes", resp.Err.Code, n)
		}
	}
}

// A "for this session" decision is one person's, in one session: under
// stateless HTTP (no session id) nothing is remembered for a session, and
// two identities that share a session id never share a decision.
func TestSessionDecisionsAreOneCallersOwn(t *testing.T) {
	reg, fake := gateRegistry(t, providertest.Tool("mutate", "Change rows", schema, false))
	store, err := decisions.Open("", nil)
	if err != nil {
		t.Fatal(err)
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Decisions: store, Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	forSession := func(context.Context, string) (policy.Approval, error) { return policy.ApprovedForSession, nil }
	for _, tc := range []struct{ name, session string }{{"stateless", ""}, {"shared session id", "s1"}} {
		t.Run(tc.name, func(t *testing.T) {
			alice := policy.Caller{Identity: "token:alice", Session: tc.session}
			if resp := run(context.Background(), &pipeline.Request{Caller: alice, Tool: "db_mutate", Args: json.RawMessage(`{}`), AskHuman: forSession}); resp.Failed() {
				t.Fatalf("alice's approved call: %+v", resp.Err)
			}
			before := len(fake.Calls())
			bob := policy.Caller{Identity: "token:bob", Session: tc.session}
			resp := run(context.Background(), &pipeline.Request{Caller: bob, Tool: "db_mutate", Args: json.RawMessage(`{}`)})
			if resp.Err == nil || resp.Err.Code != toolerr.ConfirmationRequired || resp.Decision == "remembered" || len(fake.Calls()) != before {
				t.Fatalf("bob rode on alice's decision: %+v (%s)", resp.Err, resp.Decision)
			}
		})
	}
	// With a session, the same person's next call is remembered.
	carol := policy.Caller{Identity: "token:carol", Session: "s2"}
	run(context.Background(), &pipeline.Request{Caller: carol, Tool: "db_mutate", Args: json.RawMessage(`{}`), AskHuman: forSession})
	if resp := run(context.Background(), &pipeline.Request{Caller: carol, Tool: "db_mutate", Args: json.RawMessage(`{}`)}); resp.Decision != "remembered" {
		t.Fatalf("carol's second call: %s %+v", resp.Decision, resp.Err)
	}
}

// A rule's own confirm: human asks a person out of band (the console's
// queue) as the global mode does, instead of denying at once.
func TestRuleConfirmHumanAsksAPerson(t *testing.T) {
	reg, fake := gateRegistry(t, providertest.Tool("mutate", "Change rows", schema, false))
	access := policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{"token:intern"}, Rules: policy.Rules{Confirm: policy.ConfirmHuman}}})
	run := pipeline.New(pipeline.Options{Catalog: reg, Access: access, Rules: policy.Rules{Confirm: policy.ConfirmAgent},
		Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}})
	asked := 0
	person := func(context.Context, string) (policy.Approval, error) { asked++; return policy.ApprovedOnce, nil }
	resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: "token:intern"}, Tool: "db_mutate", Args: json.RawMessage(`{}`), Confirm: true, AskPerson: person})
	if resp.Failed() || asked != 1 || len(fake.Calls()) != 1 {
		t.Fatalf("intern's call: asked %d, %+v", asked, resp.Err)
	}
	// Agent mode for everyone else: the queue is not asked.
	resp = run(context.Background(), &pipeline.Request{Caller: policy.Caller{Identity: "token:dev"}, Tool: "db_mutate", Args: json.RawMessage(`{}`), Confirm: true, AskPerson: person})
	if resp.Failed() || asked != 1 {
		t.Fatalf("dev's call asked a person: asked %d, %+v", asked, resp.Err)
	}
}
