package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// shape renders retries the way a facade would, so tests can read them.
type shape struct{}

func (shape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	m := map[string]any{"tool": tool, "arguments": string(args)}
	if confirm != nil {
		m["confirm"] = confirm
	}
	return m
}

func TestResolveTeaches(t *testing.T) {
	tests := []struct {
		name    string
		req     pipeline.Request
		code    toolerr.Code
		message string
		detail  string // a key of Details that must be present
		want    any    // its value, when not nil
	}{
		{"malformed is returned as is", pipeline.Request{Tool: "svc_read", Malformed: toolerr.New(toolerr.InvalidArguments, "h", "bad call")},
			toolerr.InvalidArguments, "bad call", "", nil},
		{"no name", pipeline.Request{Via: "agent_tools_call", Shape: shape{}, Args: json.RawMessage(`{}`)}, toolerr.MissingToolName, "no tool name given to agent_tools_call",
			"correct_shape", map[string]any{"tool": "<tool name>", "arguments": "{}"}},
		{"name nested in arguments", pipeline.Request{Via: "v", Shape: shape{}, Args: json.RawMessage(`{"toolName":"svc_read","arguments":{"n":1}}`)},
			toolerr.MissingToolName, `the tool name "svc_read" was nested inside ` + "`arguments`",
			"correct_shape", map[string]any{"tool": "svc_read", "arguments": `{"n":1}`}},
		{"name nested, arguments beside it", pipeline.Request{Via: "v", Shape: shape{}, Args: json.RawMessage(`{"tool":"svc_read","n":1}`)},
			toolerr.MissingToolName, `the tool name "svc_read" was nested`,
			"correct_shape", map[string]any{"tool": "svc_read", "arguments": `{"n":1}`}},
		{"unknown canonical", pipeline.Request{Tool: "svc_raed"}, toolerr.UnknownTool, `no tool named "svc_raed"`,
			"did_you_mean", []string{"svc_read"}},
		{"unknown in a provider", pipeline.Request{Provider: "svc", Tool: "wrte"}, toolerr.UnknownTool, `no tool named "wrte"`,
			"did_you_mean", []string{"write"}},
		{"provider not loaded", pipeline.Request{Provider: "nope", Tool: "read"}, toolerr.ProviderUnavailable, `provider "nope" is not loaded`, "", nil},
	}
	run, fake := newPipeline(t, policy.Rules{}, nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := run(context.Background(), &tt.req)
			if resp.Err == nil || resp.Err.Code != tt.code || !strings.Contains(resp.Err.Message, tt.message) {
				t.Fatalf("err = %+v, want %s %q", resp.Err, tt.code, tt.message)
			}
			if resp.Decision != "invalid" {
				t.Errorf("decision = %q", resp.Decision)
			}
			if tt.detail != "" {
				got, _ := json.Marshal(resp.Err.Details[tt.detail])
				want, _ := json.Marshal(tt.want)
				if string(got) != string(want) {
					t.Errorf("%s = %s, want %s", tt.detail, got, want)
				}
			}
		})
	}
	if len(fake.Calls()) != 0 {
		t.Errorf("failed resolutions reached the backend: %v", fake.Calls())
	}
	// A provider-scoped call finds a tool by its own name and by its canonical one.
	for _, name := range []string{"read", "svc_read"} {
		if resp := run(context.Background(), &pipeline.Request{Provider: "svc", Tool: name}); resp.Failed() {
			t.Errorf("svc/%s: %+v", name, resp.Err)
		}
	}
}

func TestLoopGuardEscalatesThenRefuses(t *testing.T) {
	calls := 0
	run, _ := newPipeline(t, policy.Rules{}, nil, func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
		calls++
		return &provider.Result{Text: "exit 2", IsError: true, Details: map[string]any{"exit_code": 2}}, nil
	})
	req := func() *pipeline.Request {
		return &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_read", Args: json.RawMessage(`{"n":1}`)}
	}
	var codes []string
	for range 7 {
		resp := run(context.Background(), req())
		codes = append(codes, string(resp.Err.Code))
		if resp.Err.Code == toolerr.RepeatedFailure && resp.Decision != "refused" {
			if resp.Err.Details["failures"] == nil || resp.Err.Details["last_error"] == nil || resp.Result != nil {
				t.Errorf("escalated error lacks the last failure: %+v", resp)
			}
		}
	}
	want := "BACKEND_ERROR,BACKEND_ERROR,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE,REPEATED_FAILURE"
	if got := strings.Join(codes, ","); got != want {
		t.Fatalf("codes = %s", got)
	}
	if calls != 6 {
		t.Errorf("backend ran %d times; the 7th call must be refused without running", calls)
	}
	// Another session, or other arguments, are not refused.
	other := req()
	other.Session = "s2"
	if resp := run(context.Background(), other); resp.Err.Code != toolerr.BackendError {
		t.Errorf("other session: %+v", resp.Err)
	}
}

// TestLoopGuardIgnoresWaitAndRetry: a refusal that says when to come back
// (a full script pool's retry_after_ms), or a shutdown, is no failure of
// the agent's call: repeating it after the wait is what the error teaches,
// so the loop guard never escalates it (issue 44 item 7).
func TestLoopGuardIgnoresWaitAndRetry(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  *toolerr.Error
		want toolerr.Code
	}{
		{"script pool full", toolerr.New(toolerr.ProviderUnavailable, "wait", "every script slot is in use").With("retry_after_ms", 250), toolerr.ProviderUnavailable},
		{"shutting down", toolerr.New(toolerr.ShuttingDown, "retry after it restarts", "the server is shutting down"), toolerr.ShuttingDown},
		{"plain unavailable still counts", toolerr.New(toolerr.ProviderUnavailable, "", "down"), toolerr.RepeatedFailure},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run, _ := newPipeline(t, policy.Rules{}, nil, func(context.Context, catalog.Tool, json.RawMessage) (*provider.Result, error) {
				return nil, tt.err
			})
			var last toolerr.Code
			for range 8 {
				resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_read", Args: json.RawMessage(`{}`)})
				if resp.Err == nil {
					t.Fatal("no error")
				}
				last = resp.Err.Code
			}
			if last != tt.want {
				t.Errorf("8th identical call: %s, want %s", last, tt.want)
			}
		})
	}
}

func TestLoopGuardKeepsTheTeaching(t *testing.T) {
	run, _ := newPipeline(t, policy.Rules{}, nil, nil)
	var last *pipeline.Response
	for range 3 {
		last = run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_read", Args: json.RawMessage(`{"n":"x"}`)})
	}
	if last.Err.Code != toolerr.RepeatedFailure || last.Err.Details["expected_schema"] == nil ||
		!strings.Contains(last.Err.Message, "failed 3 times in a row") {
		t.Fatalf("escalated = %+v", last.Err)
	}
	// Asking for confirmation never counts as a failure.
	for range 5 {
		resp := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_write"})
		if resp.Err.Code != toolerr.ConfirmationRequired {
			t.Fatalf("confirmation escalated: %+v", resp.Err)
		}
	}
}

func TestBackendError(t *testing.T) {
	e := pipeline.BackendError(&provider.Result{Text: "boom", IsError: true, Details: map[string]any{"exit_code": 3, "stderr_tail": "x"}})
	if e.Code != toolerr.BackendError || e.Message != "the tool exited with status 3" || e.Details["output"] != "boom" || e.Details["stderr_tail"] != "x" {
		t.Errorf("with exit code: %+v", e)
	}
	e = pipeline.BackendError(&provider.Result{Text: "bad", IsError: true})
	if e.Message != "the tool reported an error" {
		t.Errorf("without exit code: %+v", e)
	}
}

func TestValidateReportsProblems(t *testing.T) {
	run, _ := newPipeline(t, policy.Rules{}, nil, nil)
	resp := run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(`{"n":"three","extra":1}`)})
	if resp.Err == nil || resp.Err.Code != toolerr.InvalidArguments {
		t.Fatalf("got %+v", resp.Err)
	}
	ps, _ := resp.Err.Details["problems"].([]pipeline.Problem)
	var paths []string
	for _, p := range ps {
		paths = append(paths, p.Path)
	}
	// The tool as it was called (issue 49, item 6: git_log, not log).
	if !slices.Contains(paths, "/n") || !strings.Contains(resp.Err.Message, `arguments for "svc_read" do not match its schema`) {
		t.Errorf("problems = %+v, message %q", ps, resp.Err.Message)
	}
	for _, tc := range []struct{ args, kind string }{{`[]`, "an array"}, {`"s"`, "a string"}, {`true`, "a boolean"}, {`1`, "a number"}} {
		resp := run(context.Background(), &pipeline.Request{Tool: "svc_read", Args: json.RawMessage(tc.args)})
		if resp.Err == nil || !strings.Contains(resp.Err.Message, "got "+tc.kind) {
			t.Errorf("%s: %+v", tc.args, resp.Err)
		}
	}
}

func TestConfirmationRetryShape(t *testing.T) {
	run, _ := newPipeline(t, policy.Rules{Confirm: policy.ConfirmToken}, nil, nil)
	req := &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_write", Args: json.RawMessage(`{"n":1}`), Shape: shape{}}
	resp := run(context.Background(), req)
	tok, _ := resp.Err.Details["confirm_token"].(string)
	retry, _ := resp.Err.Details["retry"].(map[string]any)
	if tok == "" || retry["confirm"] != tok || retry["tool"] != "svc_write" || !strings.Contains(resp.Err.Message, "confirms this exact call once") {
		t.Fatalf("token error = %+v", resp.Err)
	}
	// The token is bound to the arguments.
	other := &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_write", Args: json.RawMessage(`{"n":2}`), ConfirmToken: tok, Shape: shape{}}
	if resp := run(context.Background(), other); resp.Err == nil || resp.Err.Code != toolerr.ConfirmationRequired {
		t.Fatalf("a token confirmed other arguments: %+v", resp)
	}
	// Redeemed with the token of the same call (the failed attempt above spent the first token).
	resp = run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_write", Args: json.RawMessage(`{"n":1}`), Shape: shape{}})
	tok, _ = resp.Err.Details["confirm_token"].(string)
	ok := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_write", Args: json.RawMessage(`{"n":1}`), ConfirmToken: tok})
	if ok.Failed() || ok.Decision != "confirmed" {
		t.Fatalf("token retry = %+v", ok.Err)
	}
	// A call already confirmed upstream (a confirmed skill's own call) needs nothing more.
	pre := run(context.Background(), &pipeline.Request{Caller: policy.Caller{Session: "s"}, Tool: "svc_write", Args: json.RawMessage(`{"n":9}`), Confirmed: true})
	if pre.Failed() || pre.Decision != "confirmed" {
		t.Fatalf("pre-confirmed = %+v", pre.Err)
	}
}

func TestHumanPromptIsClippedRuneSafe(t *testing.T) {
	var asked string
	ask := func(_ context.Context, msg string) (policy.Approval, error) {
		asked = msg
		return policy.ApprovedOnce, nil
	}
	run, _ := newPipeline(t, policy.Rules{}, nil, nil)
	long := `{"token":"` + strings.Repeat("é", 600) + `"}`
	if resp := run(context.Background(), &pipeline.Request{Tool: "svc_write", Args: json.RawMessage(long), AskHuman: ask}); resp.Failed() {
		t.Fatalf("approved call failed: %+v", resp.Err)
	}
	if !strings.HasPrefix(asked, "Allow the agent to run svc_write with arguments ") || !strings.HasSuffix(asked, "…?") {
		t.Fatalf("prompt = %q", asked)
	}
	if !strings.Contains(asked, "é") || !utf8.ValidString(asked) {
		t.Errorf("the prompt split a character: %q", asked[len(asked)-20:])
	}
}

// skiller is a provider with skills for the pipeline's skill path.
type skiller struct {
	*providertest.Fake
	run func(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error)
}

func (s skiller) RunSkill(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error) {
	return s.run(ctx, name, args, tools)
}

func newSkillPipeline(t *testing.T, rules policy.Rules, run func(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error)) pipeline.Handler {
	t.Helper()
	fake := providertest.New(catalog.ProviderInfo{ID: "local", HostLocal: true, RequireConfirm: true, Timeout: time.Hour})
	fake.SetSkills(catalog.Skill{Name: "tidy", Description: "Tidy up", Args: `{"days":"how far back"}`},
		catalog.Skill{Name: "wipe", Description: "Wipe", Mutates: true})
	reg := registry.New(nil)
	if err := reg.Add(skiller{fake, run}); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	return pipeline.New(pipeline.Options{Catalog: reg, Rules: rules, Execute: pipeline.ExecuteOptions{DefaultTimeout: 50 * time.Millisecond}})
}

func TestSkillRuns(t *testing.T) {
	ok := func(_ context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error) {
		if name == "wipe" {
			_, err := tools.CallTool(context.Background(), "rm", nil)
			return nil, err
		}
		return &provider.Result{Text: name + " " + string(args)}, nil
	}
	tests := []struct {
		name     string
		rules    policy.Rules
		run      func(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error)
		req      pipeline.Request
		code     toolerr.Code
		message  string
		decision string
	}{
		{"read-only run, bare canonical name", policy.Rules{}, ok, pipeline.Request{Skill: true, Provider: "local", Tool: "tidy", Args: json.RawMessage(`{"days":3}`)}, "", "", "allowed"},
		{"unknown skill lists the skills", policy.Rules{}, ok, pipeline.Request{Skill: true, Provider: "local", Tool: "nope"}, toolerr.UnknownSkill, `no skill "nope" in provider "local"`, "invalid"},
		{"unknown provider", policy.Rules{}, ok, pipeline.Request{Skill: true, Provider: "zz", Tool: "tidy"}, toolerr.UnknownSkill, `no skill "tidy" in provider "zz"`, "invalid"},
		{"arguments must be an object", policy.Rules{}, ok, pipeline.Request{Skill: true, Provider: "local", Tool: "tidy", Args: json.RawMessage(`[3]`)}, toolerr.InvalidArguments, "arguments must be a JSON object", "invalid"},
		{"denied by canonical name: hidden, answered as unknown", policy.Rules{Deny: []string{"tid*"}}, ok, pipeline.Request{Skill: true, Provider: "local", Tool: "tidy"}, toolerr.UnknownSkill, `no skill "tidy"`, "denied"},
		{"mutating run needs confirmation", policy.Rules{}, ok, pipeline.Request{Skill: true, Provider: "local", Tool: "wipe", Shape: shape{}}, toolerr.ConfirmationRequired, `skill "wipe" changes state and needs confirmation`, "confirmation_required"},
		{"without a caller, tool calls fail cleanly", policy.Rules{}, ok, pipeline.Request{Skill: true, Provider: "local", Tool: "wipe", Confirm: true}, toolerr.ProviderUnavailable, `this skill run cannot call tools ("rm")`, "confirmed"},
		{"deadline", policy.Rules{}, func(ctx context.Context, _ string, _ json.RawMessage, _ provider.ToolCaller) (*provider.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, pipeline.Request{Skill: true, Provider: "local", Tool: "tidy"}, toolerr.Timeout, `"tidy" did not finish within 50ms`, "allowed"},
		{"plain failure keeps the skill wording", policy.Rules{}, func(context.Context, string, json.RawMessage, provider.ToolCaller) (*provider.Result, error) {
			return nil, errors.New("disk full")
		}, pipeline.Request{Skill: true, Provider: "local", Tool: "tidy"}, toolerr.BackendError, `skill "tidy" failed: disk full`, "allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := newSkillPipeline(t, tt.rules, tt.run)
			resp := run(context.Background(), &tt.req)
			if (resp.Err == nil) != (tt.code == "") || (resp.Err != nil && (resp.Err.Code != tt.code || !strings.Contains(resp.Err.Message, tt.message))) {
				t.Fatalf("err = %+v, want %s %q", resp.Err, tt.code, tt.message)
			}
			if resp.Decision != tt.decision {
				t.Errorf("decision = %q, want %q", resp.Decision, tt.decision)
			}
			if tt.code == "" && (resp.Result.Text != `tidy {"days":3}` || tt.req.Resolved.Canonical != "tidy") {
				t.Errorf("result %q, resolved %+v", resp.Result.Text, tt.req.Resolved)
			}
		})
	}
}

func TestSkillSchema(t *testing.T) {
	tests := []struct {
		args, want string
	}{
		{"", `{"type":"object"}`},
		{`days (required). label?: string`, `{"description":"days (required). label?: string","type":"object"}`},
		{`{"days":"how far back","label":"optional"}`, `{"properties":{"days":{"description":"how far back"},"label":{"description":"optional"}},"type":"object"}`},
		{`{"n":3}`, `{"properties":{"n":{}},"type":"object"}`},
		{`{}`, `{"description":"{}","type":"object"}`},
	}
	for _, tt := range tests {
		if got := string(pipeline.SkillSchema(catalog.Skill{Args: tt.args})); got != tt.want {
			t.Errorf("SkillSchema(%q) = %s, want %s", tt.args, got, tt.want)
		}
	}
}
