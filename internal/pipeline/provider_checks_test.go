package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// checking is a provider with rules beyond its schema (an "n" of 13 is
// invalid: a plain error; 7: a typed one) and calls that need a person
// (an "n" above 100).
type checking struct {
	*providertest.Fake
	validated []string
}

func (c *checking) ValidateArguments(tool catalog.Tool, args json.RawMessage) error {
	c.validated = append(c.validated, tool.Name)
	var a struct{ N int }
	_ = json.Unmarshal(args, &a)
	switch a.N {
	case 13:
		return errors.New("n may not be 13")
	case 7:
		return toolerr.New(toolerr.Code("PATH_OUTSIDE_PROJECT"), "give a path inside", "n 7 leaves the project")
	}
	return nil
}

func (c *checking) NeedsHumanApproval(_ catalog.Tool, args json.RawMessage) (string, bool) {
	var a struct{ N int }
	_ = json.Unmarshal(args, &a)
	return "it runs program number " + string(args), a.N > 100
}

func newChecking(t *testing.T, rules policy.Rules, decisions pipeline.Decisions) (pipeline.Handler, *checking) {
	t.Helper()
	c := &checking{Fake: providertest.New(catalog.ProviderInfo{ID: "svc", RequireConfirm: true, Timeout: 50 * time.Millisecond},
		providertest.Tool("read", "Read things", schema, true),
		providertest.Tool("write", "Write things", schema, false))}
	reg := registry.New(nil)
	if err := reg.Add(c); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	return pipeline.New(pipeline.Options{Catalog: reg, Rules: rules, Decisions: decisions,
		Execute: pipeline.ExecuteOptions{DefaultTimeout: time.Second}}), c
}

// TestProviderRulesRunBeforeConfirmation: a call the provider would reject
// is INVALID (never CONFIRMATION_REQUIRED first), in every confirm mode, and
// no person is asked to approve it.
func TestProviderRulesRunBeforeConfirmation(t *testing.T) {
	for _, mode := range []policy.ConfirmMode{policy.ConfirmAgent, policy.ConfirmToken, policy.ConfirmHuman} {
		t.Run(string(mode), func(t *testing.T) {
			run, c := newChecking(t, policy.Rules{Confirm: mode}, nil)
			asked := 0
			ask := func(context.Context, string) (policy.Approval, error) { asked++; return policy.ApprovedOnce, nil }
			for _, tc := range []struct {
				args string
				code toolerr.Code
			}{{`{"n":13}`, toolerr.InvalidArguments}, {`{"n":7}`, "PATH_OUTSIDE_PROJECT"}} {
				resp := run(context.Background(), &pipeline.Request{Tool: "svc_write", Args: json.RawMessage(tc.args), AskHuman: ask})
				if resp.Err == nil || resp.Err.Code != tc.code || resp.Decision != "invalid" {
					t.Fatalf("%s: %+v decision %q", tc.args, resp.Err, resp.Decision)
				}
			}
			if asked != 0 || len(c.Calls()) != 0 {
				t.Fatalf("asked %d, calls %v", asked, c.Calls())
			}
			// The schema still comes first: a schema violation never reaches the provider's rules.
			n := len(c.validated)
			if resp := run(context.Background(), &pipeline.Request{Tool: "svc_write", Args: json.RawMessage(`{"n":"x"}`), Confirm: true}); resp.Err == nil || resp.Err.Code != toolerr.InvalidArguments || len(c.validated) != n {
				t.Fatalf("%+v validated %v", resp.Err, c.validated)
			}
			// A valid call proceeds to policy as before.
			resp := run(context.Background(), &pipeline.Request{Tool: "svc_write", Args: json.RawMessage(`{"n":1}`), AskHuman: ask})
			if resp.Err != nil || asked != 1 {
				t.Fatalf("%+v asked %d", resp.Err, asked)
			}
		})
	}
}

// TestHumanApprovalWhateverTheMode: a call the provider marks as needing a
// person is confirmed by nothing else: not the agent's flag, not a token, not
// a remembered decision, not its read-only classification.
func TestHumanApprovalWhateverTheMode(t *testing.T) {
	remembered := &allowAll{}
	for _, mode := range []policy.ConfirmMode{policy.ConfirmAgent, policy.ConfirmToken, policy.ConfirmHuman} {
		run, c := newChecking(t, policy.Rules{Confirm: mode}, remembered)
		for _, req := range []pipeline.Request{
			{Tool: "svc_write", Args: json.RawMessage(`{"n":101}`), Confirm: true},
			{Tool: "svc_read", Args: json.RawMessage(`{"n":101}`)},
			{Tool: "svc_write", Args: json.RawMessage(`{"n":101}`), Confirm: true, AskHuman: broken},
			{Tool: "svc_write", Args: json.RawMessage(`{"n":101}`), Confirm: true, AskHuman: no},
		} {
			req.Session = fmt.Sprint(mode, req.Tool, req.AskHuman != nil, req.Confirm) // no loop-guard escalation
			resp := run(context.Background(), &req)
			if resp.Err == nil || resp.Err.Code != toolerr.Denied || !strings.Contains(resp.Err.JSON(), "program number") {
				t.Fatalf("%s %s: %+v", mode, req.Args, resp.Err)
			}
		}
		if len(c.Calls()) != 0 {
			t.Fatalf("%s: ran %v", mode, c.Calls())
		}
		var question string
		ask := func(_ context.Context, q string) (policy.Approval, error) {
			question = q
			return policy.ApprovedOnce, nil
		}
		resp := run(context.Background(), &pipeline.Request{Tool: "svc_write", Args: json.RawMessage(`{"n":101}`), AskHuman: ask})
		if resp.Err != nil || resp.Decision != "confirmed" || !strings.Contains(question, "program number") || len(c.Calls()) != 1 {
			t.Fatalf("%s: %+v %q %q", mode, resp.Err, resp.Decision, question)
		}
	}
	if remembered.remembered != 0 {
		t.Fatal("a per-call approval was remembered for the tool")
	}
}

type allowAll struct{ remembered int }

func (*allowAll) Allowed(catalog.Tool, pipeline.DecisionScope) bool { return true }
func (a *allowAll) Remember(catalog.Tool, pipeline.DecisionScope, policy.Approval) {
	a.remembered++
}
