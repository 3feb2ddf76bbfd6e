package facade_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

var update = flag.Bool("update", false, "rewrite golden files")

const repoSchema = `{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},"repo":{"type":"string"}},"required":["owner","repo"],"additionalProperties":false}`

type harness struct {
	t       *testing.T
	gh      *providertest.Fake
	reg     *registry.Registry
	fac     *facade.Facade
	cs      *sdk.ClientSession
	changed chan struct{}
}

type setup struct {
	progressEvery time.Duration
	mode          facade.Mode
	rules         policy.Rules
	guard         *policy.LoopGuard
	client        *sdk.ClientOptions
	version       string
	extra         []provider.Provider // registered after gh
	profile       string              // views_test.go
	access        *policy.Access      // views_test.go: profiles and per-identity rules
}

func newHarness(t *testing.T, s setup) *harness {
	t.Helper()
	gh := providertest.New(catalog.ProviderInfo{ID: "gh", Kind: "fake", Description: "GitHub repositories, issues and pull requests", DiscoverHint: "Repository names are owner/repo.", RequireConfirm: true},
		providertest.Tool("get_repo", "Get a repository's metadata: stars, default branch, topics.", repoSchema, true),
		providertest.Tool("delete_repo", "Delete a repository for good.", repoSchema, false),
		providertest.Tool("list-issues", "List open issues of a repository.", repoSchema, true),
	)
	gh.Func = func(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		if tool.Name == "list-issues" {
			return &provider.Result{Text: "boom", IsError: true, Details: map[string]any{"status": 500}}, nil
		}
		return &provider.Result{Text: tool.Name + " " + string(args)}, nil
	}
	reg := registry.New(nil)
	if err := reg.Add(gh); err != nil {
		t.Fatal(err)
	}
	for _, p := range s.extra {
		if err := reg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if s.guard == nil {
		s.guard = policy.NewLoopGuard()
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: s.rules, Access: s.access, Guard: s.guard, Execute: pipeline.ExecuteOptions{DefaultTimeout: 5 * time.Second, MaxResultChars: 1000}})
	fo := facade.Options{Mode: s.mode, Rules: s.rules, Version: "test", ProgressEvery: s.progressEvery, Profile: s.profile}
	if s.access != nil {
		fo.View = s.access.View(s.profile)
		fo.Access = func() *policy.Access { return s.access }
	}
	fac := facade.New(reg, run, fo)
	reg.OnChange(fac.Sync)
	reg.Refresh(context.Background())
	fac.Sync()

	h := &harness{t: t, gh: gh, reg: reg, fac: fac, changed: make(chan struct{}, 16)}
	opts := s.client
	if opts == nil {
		opts = &sdk.ClientOptions{}
	}
	opts.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) { h.changed <- struct{}{} }
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, opts).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: s.version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	h.cs = cs
	return h
}

func (h *harness) names() []string {
	h.t.Helper()
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, t := range res.Tools {
		out = append(out, t.Name)
	}
	return out
}

// call returns the text of the result and the decoded error envelope if any.
func (h *harness) call(name string, args any) (string, map[string]any) {
	h.t.Helper()
	res, err := h.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("call %s: protocol error %v", name, err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError {
		return text, nil
	}
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil || env.Error == nil {
		h.t.Fatalf("error result is not an envelope: %s", text)
	}
	if res.StructuredContent == nil {
		h.t.Fatalf("error result lacks structuredContent")
	}
	return text, env.Error
}

func TestProgressiveToolList(t *testing.T) {
	h := newHarness(t, setup{})
	got := strings.Join(h.names(), ",")
	if want := "agent_tools_gh_call,agent_tools_gh_discover,agent_tools_help"; got != want {
		t.Fatalf("tools = %s, want %s", got, want)
	}
}

// TestSnapshots pins every schema and description the runtime itself
// defines, per mode: one readable file per published tool under
// testdata/toolsnaps/<mode>/, failing with a diff, for a missing snapshot,
// and for a snapshot of a tool no longer published. Run with -update after
// an intended change.
func TestSnapshots(t *testing.T) {
	for _, mode := range []facade.Mode{facade.Progressive, facade.Search, facade.Flat, facade.Text, facade.Code} {
		t.Run(string(mode), func(t *testing.T) {
			s := setup{mode: mode}
			if mode == facade.Code { // code mode publishes the built-in interpreter
				s.extra = []provider.Provider{builtin.New(builtin.Options{})}
			}
			h := newHarness(t, s)
			h.gh.SetSkills(catalog.Skill{Name: "triage", Description: "Label new issues", Args: "repo (required)"})
			h.reg.Refresh(context.Background())
			res, err := h.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			items := map[string]any{}
			for _, tl := range res.Tools {
				items[tl.Name] = tl
			}
			testutil.Snapshots(t, filepath.Join("testdata", "toolsnaps", string(mode)), *update, items)
		})
	}
}

func TestDiscover(t *testing.T) {
	h := newHarness(t, setup{})
	text, e := h.call("agent_tools_gh_discover", map[string]any{})
	if e != nil {
		t.Fatal(e)
	}
	var list struct {
		Total int `json:"total"`
		Tools []struct {
			Name     string   `json:"name"`
			Required []string `json:"required"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		t.Fatal(err)
	}
	if list.Total != 3 || list.Tools[0].Name != "delete_repo" || len(list.Tools[0].Required) != 2 {
		t.Fatalf("listing = %s", text)
	}
	text, _ = h.call("agent_tools_gh_discover", map[string]any{"limit": 1})
	if !strings.Contains(text, `"next_cursor":"1"`) {
		t.Fatalf("page 1 lacks next_cursor: %s", text)
	}
	text, _ = h.call("agent_tools_gh_discover", map[string]any{"limit": 1, "cursor": "2"})
	if !strings.Contains(text, `"name":"list-issues"`) || strings.Contains(text, "next_cursor") {
		t.Fatalf("last page = %s", text)
	}
	text, _ = h.call("agent_tools_gh_discover", map[string]any{"query": "repository metadata stars"})
	var ranked struct {
		Results []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(text), &ranked); err != nil {
		t.Fatal(err)
	}
	if len(ranked.Results) == 0 || ranked.Results[0].Name != "get_repo" || len(ranked.Results[0].InputSchema) == 0 {
		t.Fatalf("ranked = %s", text)
	}
	_, e = h.call("agent_tools_gh_discover", map[string]any{"querry": "x"})
	if e == nil || e["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("misspelt key not rejected: %v", e)
	}
	if _, e = h.call("agent_tools_gh_discover", map[string]any{"limit": 0}); e["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("limit 0 must not fall back to the default: %v", e)
	}
	_, e = h.call("agent_tools_gh_discover", map[string]any{"cursor": "99"})
	if e == nil || e["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("bad cursor not rejected: %v", e)
	}
}

func TestCallErrorsTeach(t *testing.T) {
	tests := []struct {
		name     string
		args     any
		code     string
		check    string // substring of the error JSON
		backends int    // backend calls made
	}{
		{"read-only ok", map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}}, "", `get_repo {"owner":"a","repo":"b"}`, 1},
		{"mutation needs confirm", map[string]any{"toolName": "delete_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}}, "CONFIRMATION_REQUIRED", `"retry":{"arguments":{"arguments":{"owner":"a","repo":"b"},"confirm":true,"toolName":"delete_repo"},"tool":"agent_tools_gh_call"}`, 0},
		{"confirmed", map[string]any{"toolName": "delete_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}, "confirm": true}, "", "delete_repo", 1},
		{"nested toolName", map[string]any{"arguments": map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": "a"}}}, "MISSING_TOOL_NAME", `"correct_shape":{"arguments":{"arguments":{"owner":"a"},"toolName":"get_repo"},"tool":"agent_tools_gh_call"}`, 0},
		{"no name", map[string]any{"arguments": map[string]any{}}, "MISSING_TOOL_NAME", `"toolName":"<tool name>"`, 0},
		{"unknown tool", map[string]any{"toolName": "get_rpo", "arguments": map[string]any{}}, "UNKNOWN_TOOL", `"did_you_mean":["get_repo"]`, 0},
		{"canonical name accepted", map[string]any{"toolName": "gh_get_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}}, "", "get_repo", 1},
		{"wrong type", map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": 1, "repo": "b"}}, "INVALID_ARGUMENTS", `"path":"/owner"`, 0},
		{"missing required", map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": "a"}}, "INVALID_ARGUMENTS", `expected_schema`, 0},
		{"extra property", map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": "a", "repo": "b", "x": 1}}, "INVALID_ARGUMENTS", `'x'`, 0},
		{"arguments as string", map[string]any{"toolName": "get_repo", "arguments": `{"owner":"a"}`}, "INVALID_ARGUMENTS", "must be an object", 0},
		{"args for arguments", map[string]any{"toolName": "get_repo", "args": map[string]any{"owner": "a"}}, "INVALID_ARGUMENTS", `missing property 'repo'`, 0},
		{"unknown meta key", map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": "a"}, "extra": 1}, "INVALID_ARGUMENTS", `"allowed":["toolName","arguments","confirm"],"code":"INVALID_ARGUMENTS","correct_shape":{"arguments":{"arguments":{"extra":1,"owner":"a"},"toolName":"get_repo"}`, 0},
		{"backend failure", map[string]any{"toolName": "list-issues", "arguments": map[string]any{"owner": "a", "repo": "b"}}, "BACKEND_ERROR", `"output":"boom"`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, setup{})
			text, e := h.call("agent_tools_gh_call", tc.args)
			if tc.code == "" && e != nil {
				t.Fatalf("unexpected error %s", text)
			}
			if tc.code != "" && (e == nil || e["code"] != tc.code) {
				t.Fatalf("got %s, want code %s", text, tc.code)
			}
			if !strings.Contains(text, tc.check) {
				t.Errorf("result %s lacks %s", text, tc.check)
			}
			if e != nil && e["hint"] == "" {
				t.Errorf("error without hint: %s", text)
			}
			if n := len(h.gh.Calls()); n != tc.backends {
				t.Errorf("backend called %d times, want %d", n, tc.backends)
			}
		})
	}
}

func TestLoopGuard(t *testing.T) {
	now := time.Unix(1000, 0)
	g := policy.NewLoopGuard()
	g.Now = func() time.Time { return now }
	h := newHarness(t, setup{guard: g})
	bad := map[string]any{"arguments": map[string]any{"toolName": "get_repo"}}
	var codes []string
	for range 7 {
		_, e := h.call("agent_tools_gh_call", bad)
		codes = append(codes, e["code"].(string))
	}
	want := "MISSING_TOOL_NAME,MISSING_TOOL_NAME,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE"
	if got := strings.Join(codes, ","); got != want {
		t.Fatalf("codes = %s", got)
	}
	text, _ := h.call("agent_tools_gh_call", bad)
	if !strings.Contains(text, "refused") {
		t.Fatalf("7th+ call should be refused: %s", text)
	}
	// A backend failure repeated: the backend stops being reached once refused.
	failing := map[string]any{"toolName": "list-issues", "arguments": map[string]any{"owner": "a", "repo": "b"}}
	for range 8 {
		h.call("agent_tools_gh_call", failing)
	}
	if n := len(h.gh.Calls()); n != g.RefuseAfter {
		t.Fatalf("backend reached %d times, want %d", n, g.RefuseAfter)
	}
	text, e := h.call("agent_tools_gh_call", failing)
	if e["code"] != "REPEATED_FAILURE" || !strings.Contains(text, "refused") {
		t.Fatalf("not refused: %s", text)
	}
	now = now.Add(g.CoolDown)
	_, e = h.call("agent_tools_gh_call", failing)
	if e["code"] != "BACKEND_ERROR" || len(h.gh.Calls()) != g.RefuseAfter+1 {
		t.Fatalf("after the cool-down the call should run again: %v", e)
	}
}

func TestSearchMode(t *testing.T) {
	h := newHarness(t, setup{mode: facade.Search})
	if got := strings.Join(h.names(), ","); got != "agent_tools_call,agent_tools_help,agent_tools_search" {
		t.Fatalf("tools = %s", got)
	}
	text, e := h.call("agent_tools_search", map[string]any{"query": "open issues"})
	if e != nil || !strings.Contains(text, `"name":"gh_list-issues"`) {
		t.Fatalf("search = %s", text)
	}
	_, e = h.call("agent_tools_search", map[string]any{})
	if e == nil || e["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("empty query accepted")
	}
	text, e = h.call("agent_tools_call", map[string]any{"tool": "gh_get_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}})
	if e != nil || !strings.HasPrefix(text, "get_repo") {
		t.Fatalf("call = %s", text)
	}
	text, e = h.call("agent_tools_call", map[string]any{"tool": "gh_delete_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}})
	if e == nil || !strings.Contains(text, `"retry":{"arguments":{"arguments":{"owner":"a","repo":"b"},"confirm":true,"tool":"gh_delete_repo"},"tool":"agent_tools_call"}`) {
		t.Fatalf("confirmation = %s", text)
	}
}

func TestFlatMode(t *testing.T) {
	h := newHarness(t, setup{mode: facade.Flat})
	if got := strings.Join(h.names(), ","); got != "gh_delete_repo,gh_get_repo,gh_list-issues" {
		t.Fatalf("tools = %s", got)
	}
	res, _ := h.cs.ListTools(context.Background(), nil)
	for _, tl := range res.Tools {
		props := tl.InputSchema.(map[string]any)["properties"].(map[string]any)
		_, has := props[facade.ConfirmArg]
		if has != (tl.Name == "gh_delete_repo") {
			t.Errorf("%s: confirm property present = %v", tl.Name, has)
		}
	}
	args := map[string]any{"owner": "a", "repo": "b"}
	_, e := h.call("gh_delete_repo", args)
	if e["code"] != "CONFIRMATION_REQUIRED" {
		t.Fatalf("flat mutation without confirmation: %v", e)
	}
	args[facade.ConfirmArg] = "yes"
	if _, e := h.call("gh_delete_repo", args); e["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("a non-boolean confirmation must be rejected: %v", e)
	}
	if text, e := h.call("gh_get_repo", map[string]any{"owner": "a", "repo": "b", facade.ConfirmArg: true}); e != nil || text != `get_repo {"owner":"a","repo":"b"}` {
		t.Fatalf("confirming a read-only tool is harmless: %s", text)
	}
	if _, e := h.call("gh_nope", map[string]any{}); e["code"] != "UNKNOWN_TOOL" {
		t.Fatalf("unknown flat tool: %v", e)
	}
	if text, _ := h.call("gh_get_rpo", map[string]any{}); !strings.Contains(text, `"did_you_mean":["gh_get_repo"]`) {
		t.Fatalf("no suggestion: %s", text)
	}
	args[facade.ConfirmArg] = true
	text, e := h.call("gh_delete_repo", args)
	if e != nil || text != `delete_repo {"owner":"a","repo":"b"}` {
		t.Fatalf("confirmed flat call = %s (the confirm flag must not reach the backend)", text)
	}
}

func TestDenyHidesAndBlocks(t *testing.T) {
	h := newHarness(t, setup{mode: facade.Search, rules: policy.Rules{Deny: []string{"*_delete_*"}}})
	text, _ := h.call("agent_tools_search", map[string]any{"query": "delete repository"})
	if strings.Contains(text, "delete_repo") {
		t.Fatalf("denied tool listed: %s", text)
	}
	_, e := h.call("agent_tools_call", map[string]any{"tool": "gh_delete_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}, "confirm": true})
	// Hidden, so it answers as a tool that does not exist: nothing of it
	// (not even that it exists) reaches the model.
	if e["code"] != "UNKNOWN_TOOL" || len(h.gh.Calls()) != 0 || strings.Contains(fmt.Sprint(e["did_you_mean"]), "delete") {
		t.Fatalf("denied tool ran: %v", e)
	}
}

func TestListChanged(t *testing.T) {
	h := newHarness(t, setup{mode: facade.Flat})
	h.names() // the client only gets notifications after it has listed
	h.gh.SetTools(providertest.Tool("get_repo", "Get a repository.", repoSchema, true))
	if !h.reg.Refresh(context.Background()) {
		t.Fatal("refresh saw no change")
	}
	select {
	case <-h.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	if got := strings.Join(h.names(), ","); got != "gh_get_repo" {
		t.Fatalf("tools after change = %s", got)
	}
	// A broken provider keeps its last good tools.
	h.gh.SetError(errors.New("backend down"))
	h.reg.Refresh(context.Background())
	if got := strings.Join(h.names(), ","); got != "gh_get_repo" {
		t.Fatalf("tools after failure = %s", got)
	}
}

func TestSkills(t *testing.T) {
	h := newHarness(t, setup{})
	h.gh.SetSkills(catalog.Skill{Name: "peek", Description: "Look at a repository", Args: "tools: list of tool names",
		Related: []catalog.Related{{Target: "gh:other", Why: "next step"}}})
	h.reg.Refresh(context.Background())
	if got := strings.Join(h.names(), ","); !strings.Contains(got, "agent_tools_gh_run_skill") {
		t.Fatalf("run_skill missing: %s", got)
	}
	text, _ := h.call("agent_tools_gh_discover", map[string]any{"query": "look at repository"})
	if !strings.Contains(text, `"kind":"skill"`) || !strings.Contains(text, `"related":[{"target":"gh:other","why":"next step"}]`) {
		t.Fatalf("discover lacks the skill: %s", text)
	}
	_, e := h.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek", "arguments": map[string]any{"tools": []string{"gh_delete_repo"}, "args": map[string]any{"owner": "a", "repo": "b"}}})
	if e["code"] != "CONFIRMATION_REQUIRED" {
		t.Fatalf("a skill's tool calls must pass policy: %v", e)
	}
	text, e = h.call("agent_tools_gh_run_skill", map[string]any{"skill": "peek", "confirm": true, "arguments": map[string]any{"tools": []string{"gh_get_repo", "gh_delete_repo"}, "args": map[string]any{"owner": "a", "repo": "b"}}})
	if e != nil || text != `peek: get_repo {"owner":"a","repo":"b"} delete_repo {"owner":"a","repo":"b"}` {
		t.Fatalf("confirmed skill = %s", text)
	}
	_, e = h.call("agent_tools_gh_run_skill", map[string]any{"skill": "nope"})
	if e["code"] != "UNKNOWN_SKILL" {
		t.Fatalf("unknown skill: %v", e)
	}
}

func TestElicitationConfirms(t *testing.T) {
	for _, tc := range []struct {
		name, action string
		content      map[string]any
		code         string
	}{
		{"accept", "accept", map[string]any{"approve": true}, ""},
		{"decline", "decline", map[string]any{"approve": true}, "DENIED"},
		{"unchecked", "accept", map[string]any{"approve": false}, "DENIED"},
		// Regression: an accept without content is no answer,
		// not "the user declined": the agent's own confirmation is asked for.
		{"accept without content", "accept", nil, "CONFIRMATION_REQUIRED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			h := newHarness(t, setup{version: "2025-11-25", client: &sdk.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked++
					return &sdk.ElicitResult{Action: tc.action, Content: tc.content}, nil
				},
			}})
			_, e := h.call("agent_tools_gh_call", map[string]any{"toolName": "delete_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}})
			if asked != 1 {
				t.Fatalf("human asked %d times", asked)
			}
			if (e == nil) != (tc.code == "") || (e != nil && e["code"] != tc.code) {
				t.Fatalf("got %v, want %q", e, tc.code)
			}
		})
	}
}

func TestTokenConfirmation(t *testing.T) {
	h := newHarness(t, setup{rules: policy.Rules{Confirm: policy.ConfirmToken}})
	args := map[string]any{"owner": "a", "repo": "b"}
	_, e := h.call("agent_tools_gh_call", map[string]any{"toolName": "delete_repo", "arguments": args, "confirm": true})
	if e["code"] != "CONFIRMATION_REQUIRED" {
		t.Fatalf("a blind confirm: true must not pass in token mode: %v", e)
	}
	tok, _ := e["confirm_token"].(string)
	retry := e["retry"].(map[string]any)["arguments"].(map[string]any)
	if tok == "" || retry["confirm"] != tok {
		t.Fatalf("retry lacks the token: %v", e)
	}
	// The token is bound to the exact arguments.
	_, e = h.call("agent_tools_gh_call", map[string]any{"toolName": "delete_repo", "arguments": map[string]any{"owner": "a", "repo": "c"}, "confirm": tok})
	if e["code"] != "CONFIRMATION_REQUIRED" || len(h.gh.Calls()) != 0 {
		t.Fatalf("token accepted for other arguments: %v", e)
	}
	if _, e = h.call("agent_tools_gh_call", retry); e != nil || len(h.gh.Calls()) != 1 {
		t.Fatalf("the exact retry was refused: %v", e)
	}
	if _, e = h.call("agent_tools_gh_call", retry); e["code"] != "CONFIRMATION_REQUIRED" || len(h.gh.Calls()) != 1 {
		t.Fatalf("a token must work once: %v", e)
	}
}

func TestTextMode(t *testing.T) {
	h := newHarness(t, setup{mode: facade.Text})
	if got := strings.Join(h.names(), ","); got != "agent_tools_exec" {
		t.Fatalf("tools = %s", got)
	}
	exec := func(line string) (string, map[string]any) {
		return h.call("agent_tools_exec", map[string]any{"command": line})
	}
	if text, e := exec("help"); e != nil || !strings.Contains(text, `"prefix":"gh"`) {
		t.Fatalf("help = %s", text)
	}
	if text, e := exec("gh discover repository stars"); e != nil || !strings.Contains(text, `"name":"get_repo"`) {
		t.Fatalf("discover = %s", text)
	}
	if text, e := exec("gh call get_repo owner=withastro repo='astro'"); e != nil || text != `get_repo {"owner":"withastro","repo":"astro"}` {
		t.Fatalf("call = %s", text)
	}
	text, e := exec("gh call delete_repo owner=a repo=b")
	if e["code"] != "CONFIRMATION_REQUIRED" || !strings.Contains(text, `"command":"gh call delete_repo owner=a repo=b --confirm"`) {
		t.Fatalf("confirmation = %s", text)
	}
	if _, e := exec("gh call delete_repo owner=a repo=b --confirm"); e != nil {
		t.Fatalf("confirmed: %v", e)
	}
	if _, e := exec("gh frobnicate"); e["code"] != "INVALID_ARGUMENTS" {
		t.Fatalf("bad verb: %v", e)
	}
}

func TestProgressHeartbeatWhileRunning(t *testing.T) {
	progress := make(chan *sdk.ProgressNotificationParams, 8)
	h := newHarness(t, setup{progressEvery: 5 * time.Millisecond, client: &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			select {
			case progress <- req.Params:
			default:
			}
		},
	}})
	release := make(chan struct{})
	h.gh.Func = func(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		<-release // held until the client saw a heartbeat
		return &provider.Result{Text: "done"}, nil
	}
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "agent_tools_gh_call", Arguments: map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}}}
		params.SetProgressToken("tok-1")
		res, err := h.cs.CallTool(context.Background(), params)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case p := <-progress:
		if p.ProgressToken != "tok-1" || !strings.Contains(p.Message, "get_repo still running") {
			t.Errorf("progress = %+v", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no progress notification while the call ran")
	}
	close(release)
	if res := <-done; res == nil || res.IsError {
		t.Fatalf("result = %+v", res)
	}
}
