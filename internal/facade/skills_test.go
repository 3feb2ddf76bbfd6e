package facade_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// skillProvider is a fake whose skills also know how to hang and to fail, so
// that a skill run's own deadline and loop guard can be observed.
type skillProvider struct {
	*providertest.Fake
}

func (p skillProvider) RunSkill(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error) {
	switch name {
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "broken":
		return nil, errors.New("the recipe broke")
	}
	return p.Fake.RunSkill(ctx, name, args, tools)
}

// auditRecords decodes the audit lines written so far.
func auditRecords(t *testing.T, audit *testutil.SyncBuffer) []pipeline.AuditRecord {
	t.Helper()
	var out []pipeline.AuditRecord
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		if line == "" {
			continue
		}
		var r pipeline.AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

type skillSetup struct {
	rules   policy.Rules
	elicit  func() (string, bool) // nil: the client cannot elicit; else its answer (action, approve)
	timeout time.Duration
	mode    facade.Mode
}

// newSkillHarness serves provider gh with the skills peek (read-only),
// change (mutating), hang and broken, in progressive mode, with an audit log.
func newSkillHarness(t *testing.T, s skillSetup) (*harness, *testutil.SyncBuffer, *int) {
	t.Helper()
	gh := providertest.New(catalog.ProviderInfo{ID: "gh", Kind: "fake", Description: "GitHub", RequireConfirm: true, Timeout: time.Hour},
		providertest.Tool("get_repo", "Get a repository.", repoSchema, true),
		providertest.Tool("delete_repo", "Delete a repository.", repoSchema, false))
	gh.SetSkills(
		catalog.Skill{Name: "peek", Description: "Look at a repository", Args: "tools: list of tool names"},
		catalog.Skill{Name: "change", Description: "Change a repository", Mutates: true},
		catalog.Skill{Name: "hang", Description: "Never finishes"},
		catalog.Skill{Name: "broken", Description: "Always fails"},
	)
	reg := registry.New(nil)
	if err := reg.Add(skillProvider{gh}); err != nil {
		t.Fatal(err)
	}
	audit := &testutil.SyncBuffer{}
	if s.timeout == 0 {
		s.timeout = 5 * time.Second
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: s.rules, AuditTo: audit, Execute: pipeline.ExecuteOptions{DefaultTimeout: s.timeout}})
	fac := facade.New(reg, run, facade.Options{Mode: s.mode, Rules: s.rules, Version: "test"})
	reg.Refresh(context.Background())
	fac.Sync()

	asked := new(int)
	opts := &sdk.ClientOptions{}
	if s.elicit != nil {
		opts.ElicitationHandler = func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			*asked++ // the client handles one request at a time here
			action, approve := s.elicit()
			return &sdk.ElicitResult{Action: action, Content: map[string]any{"approve": approve}}, nil
		}
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "skill-client", Version: "1"}, opts).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return &harness{t: t, gh: gh, reg: reg, fac: fac, cs: cs}, audit, asked
}

var peekArgs = map[string]any{"tools": []string{"gh_get_repo"}, "args": map[string]any{"owner": "a", "repo": "b"}}

func TestSkillRunIsAudited(t *testing.T) {
	h, audit, _ := newSkillHarness(t, skillSetup{})
	text, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek", "arguments": peekArgs})
	if e != nil || !strings.HasPrefix(text, "peek: get_repo") {
		t.Fatalf("peek = %s %v", text, e)
	}
	recs := auditRecords(t, audit)
	if len(recs) != 2 {
		t.Fatalf("audit has %d records, want the inner call and the run: %+v", len(recs), recs)
	}
	inner, outer := recs[0], recs[1] // the inner call finishes first
	if inner.Tool != "gh_get_repo" || inner.Via != "skill:gh:peek" || inner.Outcome != "ok" {
		t.Errorf("inner call record = %+v", inner)
	}
	if outer.Tool != "gh_peek" || outer.Provider != "gh" || outer.Via != "agent_tools_gh_run_skill" ||
		outer.Decision != "allowed" || outer.Outcome != "ok" || outer.Identity == "" || outer.Client != "skill-client" {
		t.Errorf("skill run record = %+v", outer)
	}
	// An unknown skill is audited too, under the name given.
	if _, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "nope"}); e["code"] != "UNKNOWN_SKILL" {
		t.Fatalf("unknown skill: %v", e)
	}
	if recs := auditRecords(t, audit); len(recs) != 3 || recs[2].Tool != "nope" || recs[2].ErrorCode != "UNKNOWN_SKILL" {
		t.Errorf("unknown skill record = %+v", recs[len(recs)-1])
	}
}

func TestSkillRunIsLoopGuarded(t *testing.T) {
	h, _, _ := newSkillHarness(t, skillSetup{})
	var codes []string
	for range 8 { // the guard escalates at the 3rd identical failure and refuses from the 6th
		_, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "broken"})
		codes = append(codes, e["code"].(string))
	}
	want := "BACKEND_ERROR,BACKEND_ERROR,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE"
	if got := strings.Join(codes, ","); got != want {
		t.Fatalf("codes = %s, want %s", got, want)
	}
	// The failure keeps the skill's own wording.
	h2, _, _ := newSkillHarness(t, skillSetup{})
	if _, e := h2.call("agent_tools_gh_run_skill", map[string]any{"skill": "broken"}); e["message"] != `skill "broken" failed: the recipe broke` ||
		e["hint"] != "The skill failed; read the message before retrying." {
		t.Errorf("broken skill = %v", e)
	}
}

func TestSkillRunIsDeadlineBound(t *testing.T) {
	// The provider's per-call timeout (an hour) is for one tool call; a run
	// is bound by the runtime's deadline.
	h, audit, _ := newSkillHarness(t, skillSetup{timeout: 50 * time.Millisecond})
	_, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "hang"})
	if e["code"] != "TIMEOUT" || !strings.Contains(e["message"].(string), `"gh_hang" did not finish within 50ms`) {
		t.Fatalf("hang = %v", e)
	}
	if recs := auditRecords(t, audit); len(recs) != 1 || recs[0].ErrorCode != "TIMEOUT" || recs[0].Tool != "gh_hang" {
		t.Errorf("audit = %+v", recs)
	}
}

func TestSkillRunIsDenyChecked(t *testing.T) {
	h, audit, _ := newSkillHarness(t, skillSetup{rules: policy.Rules{Deny: []string{"gh_pe*"}}})
	_, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek", "arguments": peekArgs})
	if e["code"] != "UNKNOWN_SKILL" || !strings.Contains(e["message"].(string), `no skill "peek"`) || strings.Contains(fmt.Sprint(e["skills"]), "peek") {
		t.Fatalf("denied skill = %v", e)
	}
	if got := h.gh.Calls(); len(got) != 0 {
		t.Errorf("a denied skill ran tools: %v", got)
	}
	if recs := auditRecords(t, audit); len(recs) != 1 || recs[0].Decision != "denied" {
		t.Errorf("audit = %+v", recs)
	}
	// A denied skill is hidden like a denied tool: not in run_skill's list, not in discover.
	for _, tool := range h.fac.Tools() {
		if tool.Name == "agent_tools_gh_run_skill" && (strings.Contains(tool.Description, "peek") || !strings.Contains(tool.Description, "change")) {
			t.Errorf("run_skill lists = %q", tool.Description)
		}
	}
	if text, _ := h.call("agent_tools_gh_discover", map[string]any{"query": "look at a repository"}); strings.Contains(text, `"name":"peek"`) {
		t.Errorf("discover shows a denied skill: %s", text)
	}
	// The allow list names skills the same way.
	h2, _, _ := newSkillHarness(t, skillSetup{rules: policy.Rules{Allow: []string{"gh_get_repo", "gh_change"}}})
	if _, e := h2.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek", "arguments": peekArgs}); e["code"] != "UNKNOWN_SKILL" {
		t.Errorf("skill outside the allow list = %v", e)
	}
	// With every skill denied, there is no run_skill tool at all.
	h3, _, _ := newSkillHarness(t, skillSetup{rules: policy.Rules{Allow: []string{"gh_get_repo"}}})
	if _, e := h3.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek"}); e["code"] != "UNKNOWN_TOOL" {
		t.Errorf("run_skill with every skill denied = %v", e)
	}
}

func TestSkillArgumentsAreValidated(t *testing.T) {
	h, _, _ := newSkillHarness(t, skillSetup{})
	_, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek", "arguments": "tools=gh_get_repo"})
	if e["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("string arguments = %v", e)
	}
	if len(h.gh.Calls()) != 0 {
		t.Errorf("an invalid run ran tools: %v", h.gh.Calls())
	}
}

func TestSkillConfirmationAgentMode(t *testing.T) {
	h, audit, _ := newSkillHarness(t, skillSetup{})
	args := map[string]any{"tools": []string{"gh_delete_repo"}, "args": map[string]any{"owner": "a", "repo": "b"}}
	_, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "change", "arguments": args})
	if e["code"] != "CONFIRMATION_REQUIRED" || e["message"] != `skill "change" changes state and needs confirmation` {
		t.Fatalf("unconfirmed = %v", e)
	}
	retry, _ := json.Marshal(e["retry"])
	if want := `{"arguments":{"arguments":{"args":{"owner":"a","repo":"b"},"tools":["gh_delete_repo"]},"confirm":true,"skill":"change"},"tool":"agent_tools_gh_run_skill"}`; string(retry) != want {
		t.Errorf("retry = %s, want %s", retry, want)
	}
	text, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "change", "confirm": true, "arguments": args})
	if e != nil || text != `change: delete_repo({"owner":"a","repo":"b"})` {
		t.Fatalf("confirmed = %s %v", text, e)
	}
	recs := auditRecords(t, audit)
	if last := recs[len(recs)-1]; last.Tool != "gh_change" || last.Decision != "confirmed" {
		t.Errorf("confirmed run record = %+v", last)
	}
}

func TestSkillConfirmationTokenMode(t *testing.T) {
	h, _, _ := newSkillHarness(t, skillSetup{rules: policy.Rules{Confirm: policy.ConfirmToken}})
	args := map[string]any{"tools": []string{"gh_delete_repo"}, "args": map[string]any{"owner": "a", "repo": "b"}}
	// A blind confirm: true is not enough in token mode.
	_, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "change", "confirm": true, "arguments": args})
	if e["code"] != "CONFIRMATION_REQUIRED" {
		t.Fatalf("confirm: true in token mode = %v", e)
	}
	tok, _ := e["confirm_token"].(string)
	retry, _ := e["retry"].(map[string]any)
	if tok == "" || retry["tool"] != "agent_tools_gh_run_skill" || retry["arguments"].(map[string]any)["confirm"] != tok {
		t.Fatalf("token-mode error lacks the token retry: %v", e)
	}
	// The retry confirms the run, and the run's own mutating calls with it.
	text, e := h.call("agent_tools_gh_run_skill", retry["arguments"])
	if e != nil || text != `change: delete_repo({"owner":"a","repo":"b"})` {
		t.Fatalf("token retry = %s %v", text, e)
	}
	// A token is good once.
	if _, e := h.call("agent_tools_gh_run_skill", retry["arguments"]); e["code"] != "CONFIRMATION_REQUIRED" {
		t.Errorf("a token was redeemed twice: %v", e)
	}
	// The schema says the token is accepted.
	for _, tool := range h.fac.Tools() {
		if tool.Name == "agent_tools_gh_run_skill" {
			b, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(string(b), `"confirm":{"description":"To confirm a skill that changes state, pass the confirm token`) {
				t.Errorf("token-mode run_skill schema = %s", b)
			}
		}
	}
}

func TestSkillConfirmationHumanMode(t *testing.T) {
	args := map[string]any{"tools": []string{"gh_delete_repo"}, "args": map[string]any{"owner": "a", "repo": "b"}}
	run := map[string]any{"skill": "change", "confirm": true, "arguments": args}
	t.Run("no human to ask", func(t *testing.T) {
		h, _, _ := newSkillHarness(t, skillSetup{rules: policy.Rules{Confirm: policy.ConfirmHuman}})
		if _, e := h.call("agent_tools_gh_run_skill", run); e["code"] != "DENIED" {
			t.Fatalf("human mode without elicitation = %v", e)
		}
		if len(h.gh.Calls()) != 0 {
			t.Errorf("tools ran: %v", h.gh.Calls())
		}
	})
	t.Run("approved", func(t *testing.T) {
		h, _, asked := newSkillHarness(t, skillSetup{rules: policy.Rules{Confirm: policy.ConfirmHuman}, elicit: func() (string, bool) { return "accept", true }})
		text, e := h.call("agent_tools_gh_run_skill", run)
		if e != nil || text != `change: delete_repo({"owner":"a","repo":"b"})` {
			t.Fatalf("approved = %s %v", text, e)
		}
		if *asked != 1 {
			t.Errorf("the human was asked %d times; once covers the run and its calls", *asked)
		}
	})
	t.Run("declined", func(t *testing.T) {
		h, _, _ := newSkillHarness(t, skillSetup{rules: policy.Rules{Confirm: policy.ConfirmHuman}, elicit: func() (string, bool) { return "decline", false }})
		if _, e := h.call("agent_tools_gh_run_skill", run); e["code"] != "DENIED" {
			t.Fatalf("declined = %v", e)
		}
		if len(h.gh.Calls()) != 0 {
			t.Errorf("tools ran: %v", h.gh.Calls())
		}
	})
	t.Run("read-only skill is not asked about", func(t *testing.T) {
		h, _, asked := newSkillHarness(t, skillSetup{rules: policy.Rules{Confirm: policy.ConfirmHuman}, elicit: func() (string, bool) { return "accept", true }})
		if _, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek", "arguments": peekArgs}); e != nil {
			t.Fatalf("peek = %v", e)
		}
		if *asked != 0 {
			t.Errorf("asked %d times for a read-only skill", *asked)
		}
	})
}

func TestGlobalRunSkill(t *testing.T) {
	h, audit, _ := newSkillHarness(t, skillSetup{mode: facade.Search})
	_, e := h.call("agent_tools_run_skill", map[string]any{"skill": "gh:change"})
	retry, _ := json.Marshal(e["retry"])
	if want := `{"arguments":{"arguments":{},"confirm":true,"skill":"gh:change"},"tool":"agent_tools_run_skill"}`; e["code"] != "CONFIRMATION_REQUIRED" || string(retry) != want {
		t.Fatalf("unconfirmed global run = %v, retry %s", e, retry)
	}
	if recs := auditRecords(t, audit); len(recs) != 1 || recs[0].Tool != "gh_change" || recs[0].Via != "agent_tools_run_skill" {
		t.Errorf("audit = %+v", recs)
	}
	if _, e := h.call("agent_tools_run_skill", map[string]any{"skill": "change"}); e["code"] != "UNKNOWN_SKILL" ||
		!strings.Contains(e["message"].(string), "has no provider prefix") {
		t.Errorf("unprefixed = %v", e)
	}
	if _, e := h.call("agent_tools_run_skill", map[string]any{"skill": "zz:change"}); e["code"] != "UNKNOWN_SKILL" {
		t.Errorf("unknown provider = %v", e)
	}
}
