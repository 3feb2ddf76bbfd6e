package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// fakeCaller records calls and answers with fn (default: echo the call as JSON).
type fakeCaller struct {
	mu    sync.Mutex
	calls []string // "name args"
	fn    func(ctx context.Context, name string, args json.RawMessage) (*provider.Result, error)
}

func (f *fakeCaller) CallTool(ctx context.Context, name string, args json.RawMessage) (*provider.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+string(args))
	f.mu.Unlock()
	if f.fn != nil {
		return f.fn(ctx, name, args)
	}
	b, _ := json.Marshal(map[string]any{"tool": name, "args": args})
	return &provider.Result{Text: string(b)}, nil
}

func (f *fakeCaller) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

var info = catalog.ProviderInfo{ID: "gh", Kind: "mcp", Description: "GitHub"}

// newDir writes files into a temp dir and returns a Dir over it.
func newDir(t *testing.T, o Options, files map[string]string) (*Dir, string, *testutil.SyncBuffer) {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log := &testutil.SyncBuffer{}
	o.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second // generous: the machine may be loaded
	}
	return NewDir(info, dir, o), dir, log
}

const triage = `// A seed-style skill: ES-module-ish exports.
export const meta = {
  description: 'Triage open issues: list them, label the stale ones.',
  args: 'label?: string (default "stale"). days (required).',
  related: [{ target: "gh:open-pr", why: "after triage, open a PR" }],
  mutates: true,
};

export async function run(tools, args) {
  if (typeof args.days !== "number") {
    throw Object.assign(new Error("days is required (a number)"), { code: "INVALID_ARGUMENTS", hint: "Pass {days: 30}." });
  }
  const list = await tools.call("gh_list_issues", { state: "open" });
  const label = args.label ?? "stale";
  const done = [];
  for (const issue of list.issues) {
    if (issue.age > args.days) {
      tools.call(tools.canonical("add_label"), { number: issue.number, label });
      done.push(issue.number);
    }
  }
  console.log("labelled", done.length);
  return { provider: tools.provider, labelled: done };
}
`

func issuesCaller() *fakeCaller {
	return &fakeCaller{fn: func(_ context.Context, name string, args json.RawMessage) (*provider.Result, error) {
		switch name {
		case "gh_list_issues":
			return &provider.Result{Text: `{"issues": [{"number": 1, "age": 40}, {"number": 2, "age": 3}, {"number": 3, "age": 90}]}`}, nil
		case "gh_add_label":
			return &provider.Result{Text: "ok"}, nil
		}
		return nil, toolerr.New(toolerr.UnknownTool, "", "no tool %q", name)
	}}
}

func TestRunSkill(t *testing.T) {
	d, _, log := newDir(t, Options{}, map[string]string{"triage.js": triage})
	tc := issuesCaller()
	res, err := d.RunSkill(context.Background(), "triage", json.RawMessage(`{"days": 30}`), tc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != `{"provider":"gh","labelled":[1,3]}` || res.IsError {
		t.Errorf("result %+v", res)
	}
	if m, ok := res.Structured.(map[string]any); !ok || m["provider"] != "gh" {
		t.Errorf("structured %#v", res.Structured)
	}
	want := []string{
		`gh_list_issues {"state":"open"}`,
		`gh_add_label {"number":1,"label":"stale"}`,
		`gh_add_label {"number":3,"label":"stale"}`,
	}
	if got := tc.Calls(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(log.String(), "labelled 2") {
		t.Errorf("console not logged at debug: %s", log)
	}
}

func TestRunSkillResults(t *testing.T) {
	d, _, _ := newDir(t, Options{MaxOutput: 100}, map[string]string{
		"text.js":   `function run() { return "plain text" }`,
		"list.js":   `function run() { return [1, 2] }`,
		"none.js":   `async function run() {}`,
		"big.js":    `function run() { return "x".repeat(500) }`,
		"echo.js":   `function run(tools, args) { return tools.call("t", args) }`,
		"scalar.js": `function run(tools) { return typeof tools.call("t") }`,
	})
	tc := &fakeCaller{fn: func(_ context.Context, name string, args json.RawMessage) (*provider.Result, error) {
		if string(args) == "{}" {
			return &provider.Result{Text: "12345678901234567890"}, nil // a long id stays a string
		}
		return &provider.Result{Text: string(args)}, nil
	}}
	for name, want := range map[string]string{
		"text": "plain text", "list": "[1,2]", "none": "null", "echo": `{"a":[1,{"b":null}]}`, "scalar": "string",
	} {
		res, err := d.RunSkill(context.Background(), name, json.RawMessage(`{"a": [1, {"b": null}]}`), tc)
		if err != nil || res.Text != want {
			t.Errorf("%s: %v %q, want %q", name, err, res.Text, want)
		}
	}
	res, err := d.RunSkill(context.Background(), "big", nil, tc)
	if err != nil || !strings.HasPrefix(res.Text, strings.Repeat("x", 99)+"\n[result truncated") {
		t.Errorf("big: %v %q", err, res.Text)
	}
}

func TestRunSkillErrors(t *testing.T) {
	d, _, _ := newDir(t, Options{}, map[string]string{
		"triage.js": triage,
		"boom.js":   "function run() {\n  return missing.thing;\n}",
		"catch.js": `async function run(tools) {
  try { await tools.call("gh_denied", {}); } catch (e) {
    return {message: e.message, code: e.code, tool: e.tool, inner: e.envelope.error.code, isError: e instanceof Error};
  }
}`,
		"denied.js":  `function run(tools) { return tools.call("gh_denied", {}) }`,
		"failing.js": `function run(tools) { return tools.call("gh_fails", {}) }`,
		"confirm.js": `function run(tools) { tools.call("gh_mutate", {}) }`,
		"rethrow.js": `async function run(tools) { try { tools.call("gh_denied") } catch (e) { console.log("saw", e.code); throw e } }`,
		"reject.js":  `async function run() { await null; throw Object.assign(new Error("mode must be a or b"), {code: "INVALID_ARGUMENTS"}) }`,
		"weird.js":   `function run(tools) { tools.call(42) }`,
		"badargs.js": `function run(tools) { tools.call("x", "not an object") }`,
	})
	tc := &fakeCaller{fn: func(_ context.Context, name string, args json.RawMessage) (*provider.Result, error) {
		switch name {
		case "gh_denied":
			return nil, toolerr.New(toolerr.Denied, "Policy forbids it.", "%q is denied by policy", name)
		case "gh_fails":
			return &provider.Result{IsError: true, Text: "exit 3: boom", Details: map[string]any{"exit_code": 3}}, nil
		case "gh_mutate":
			return nil, toolerr.New(toolerr.ConfirmationRequired, "repeat with confirm", "%q changes state", name).With("retry", "x")
		}
		return &provider.Result{Text: "ok"}, nil
	}}
	tests := []struct {
		skill, args string
		code        toolerr.Code
		msg, hint   string
		detail      string
	}{
		{"triage", `{}`, toolerr.InvalidArguments, `skill "triage": days is required (a number)`, "Pass {days: 30}.", ""},
		{"triage", `[1]`, toolerr.InvalidArguments, "must be a JSON object", "", ""},
		{"triage", `"x"`, toolerr.InvalidArguments, "must be a JSON object", "", ""},
		{"boom", `{}`, toolerr.BackendError, `skill "boom" failed: ReferenceError: missing is not defined (line 2, column 10)`, "bug", "line"},
		{"denied", `{}`, toolerr.Denied, `skill "denied": call to "gh_denied" failed: "gh_denied" is denied by policy`, "Do not retry", "tool_error"},
		{"rethrow", `{}`, toolerr.Denied, `call to "gh_denied" failed`, "", "console"},
		{"failing", `{}`, toolerr.BackendError, `call to "gh_fails" failed: the tool reported an error`, "", "tool_error"},
		{"confirm", `{}`, toolerr.ConfirmationRequired, `call to "gh_mutate" failed`, "confirm: true", "tool_error"},
		{"reject", `{}`, toolerr.InvalidArguments, `skill "reject": mode must be a or b`, "fix the arguments", ""},
		{"weird", `{}`, toolerr.BackendError, "TypeError: tools.call(name, args): name must be", "", ""},
		{"badargs", `{}`, toolerr.BackendError, "TypeError: tools.call(name, args): args must be an object", "", ""},
		{"nope", `{}`, toolerr.UnknownSkill, `no skill "nope" in provider "gh"`, "", "skills"},
	}
	for _, tt := range tests {
		t.Run(tt.skill+tt.args, func(t *testing.T) {
			_, err := d.RunSkill(context.Background(), tt.skill, json.RawMessage(tt.args), tc)
			te, ok := toolerr.As(err)
			if !ok {
				t.Fatalf("err %T %v, want a toolerr", err, err)
			}
			if te.Code != tt.code || !strings.Contains(te.Message, tt.msg) || !strings.Contains(te.Hint, tt.hint) {
				t.Errorf("%s %q hint %q\nwant %s %q hint ~%q", te.Code, te.Message, te.Hint, tt.code, tt.msg, tt.hint)
			}
			if tt.detail != "" && te.Details[tt.detail] == nil {
				t.Errorf("details %v lack %q", te.Details, tt.detail)
			}
		})
	}
	// The tool's own envelope travels inside tool_error, with its details.
	_, err := d.RunSkill(context.Background(), "failing", nil, tc)
	te, _ := toolerr.As(err)
	inner, _ := te.Details["tool_error"].(map[string]any)
	if inner["code"] != toolerr.BackendError || inner["output"] != "exit 3: boom" || inner["exit_code"] != 3 || te.Details["tool"] != "gh_fails" {
		t.Errorf("tool_error %v", te.Details)
	}
	_, err = d.RunSkill(context.Background(), "confirm", nil, tc)
	te, _ = toolerr.As(err)
	if te.Details["retry"] != nil {
		t.Errorf("the inner retry leaked to the top: %v", te.Details)
	}
	// A caught tool error is an ordinary JS Error with the envelope.
	res, err := d.RunSkill(context.Background(), "catch", nil, tc)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal([]byte(res.Text), &got)
	if got["code"] != "DENIED" || got["inner"] != "DENIED" || got["tool"] != "gh_denied" || got["isError"] != true ||
		!strings.Contains(got["message"].(string), "denied by policy") {
		t.Errorf("caught error %v", got)
	}
}

func TestBudget(t *testing.T) {
	d, _, _ := newDir(t, Options{MaxCalls: 3}, map[string]string{
		"loop.js": `function run(tools) { for (let i = 0; ; i++) tools.call("t_" + i, {}) }`,
		"catch.js": `function run(tools) {
  const seen = [];
  for (let i = 0; i < 5; i++) { try { tools.call("t", {}); seen.push("ok") } catch (e) { seen.push(e.code) } }
  return seen;
}`,
	})
	tc := &fakeCaller{}
	_, err := d.RunSkill(context.Background(), "loop", nil, tc)
	te, ok := toolerr.As(err)
	if !ok || te.Code != toolerr.BackendError || !strings.Contains(te.Message, "budget of 3 tool calls") || te.Details["budget"] != 3 {
		t.Fatalf("err %v %v", err, te.Details)
	}
	if got := tc.Calls(); len(got) != 3 || got[2] != "t_2 {}" {
		t.Errorf("calls %v: the 4th must not reach the caller", got)
	}
	res, err := d.RunSkill(context.Background(), "catch", nil, &fakeCaller{})
	if err != nil || res.Text != `["ok","ok","ok","BACKEND_ERROR","BACKEND_ERROR"]` {
		t.Errorf("%v %v", res, err)
	}
	// The default budget.
	d, _, _ = newDir(t, Options{}, map[string]string{"loop.js": `function run(tools) { for (;;) tools.call("t", {}) }`})
	tc = &fakeCaller{}
	_, _ = d.RunSkill(context.Background(), "loop", nil, tc)
	if n := len(tc.Calls()); n != DefaultMaxCalls {
		t.Errorf("%d calls, want %d", n, DefaultMaxCalls)
	}
}

func TestTimeout(t *testing.T) {
	d, _, _ := newDir(t, Options{Timeout: 200 * time.Millisecond}, map[string]string{
		"spin.js":  `function run() { console.log("spinning"); for (;;) {} }`,
		"slow.js":  `async function run(tools) { await tools.call("slow", {}); return "done" }`,
		"after.js": `function run(tools) { try { tools.call("slow", {}) } catch (e) { for (;;) {} } }`,
	})
	tc := &fakeCaller{fn: func(ctx context.Context, name string, _ json.RawMessage) (*provider.Result, error) {
		<-ctx.Done() // a tool that only ends with the skill's deadline
		return nil, ctx.Err()
	}}
	for _, name := range []string{"spin", "slow", "after"} {
		start := time.Now()
		_, err := d.RunSkill(context.Background(), name, nil, tc)
		te, ok := toolerr.As(err)
		if !ok || te.Code != toolerr.Timeout || !strings.Contains(te.Message, "200ms") {
			t.Errorf("%s: err %v, want TIMEOUT", name, err)
		}
		if took := time.Since(start); took > 200*time.Millisecond+3*time.Second {
			t.Errorf("%s took %v", name, took)
		}
		if name == "spin" && te.Details["console"] == nil {
			t.Errorf("spin: no console in %v", te.Details)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	d, _, _ = newDir(t, Options{}, map[string]string{"spin.js": `function run() { for (;;) {} }`})
	_, err := d.RunSkill(ctx, "spin", nil, tc)
	if te, ok := toolerr.As(err); !ok || te.Code != toolerr.Cancelled {
		t.Errorf("cancelled: %v", err)
	}
}

func TestDir(t *testing.T) {
	d, dir, log := newDir(t, Options{}, map[string]string{
		"triage.js":    triage,
		"plain.mjs":    "const meta = {description: 'Plain script.'};\nfunction run() { return 1 }",
		"nometa.js":    "function run() {}",
		"broken.js":    "export const meta = {description: 'x'};\nfunction run( {",
		"norun.js":     "export const meta = {description: 'x'};",
		"warn.js":      "const meta = {description: 'w', related: [{target: 'bad target'}, 'x', {target: 'a:b', why: 3}, {target: 'gh:triage'}]}; function run() {}",
		"dup.js":       "function run() {}",
		"dup.mjs":      "function run() { return 'mjs' }",
		"README.md":    "not a skill",
		".hidden.js":   "syntax error (",
		"bad name!.js": "function run() {}",
	})
	if err := os.Mkdir(filepath.Join(dir, "sub.js"), 0o755); err != nil {
		t.Fatal(err)
	}
	skills, err := d.Skills(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range skills {
		names = append(names, s.Name)
		if s.Provider != "gh" {
			t.Errorf("%s: provider %q", s.Name, s.Provider)
		}
	}
	if strings.Join(names, ",") != "dup,nometa,plain,triage,warn" {
		t.Errorf("skills %v", names)
	}
	tr := skills[3]
	if tr.Description != "Triage open issues: list them, label the stale ones." || !tr.Mutates ||
		tr.Args != `label?: string (default "stale"). days (required).` || len(tr.Related) != 1 || tr.Related[0] != (catalog.Related{Target: "gh:open-pr", Why: "after triage, open a PR"}) {
		t.Errorf("triage %+v", tr)
	}
	if w := skills[4]; len(w.Related) != 1 || w.Related[0].Target != "gh:triage" {
		t.Errorf("warn related %+v", w.Related)
	}
	diags := map[string]provider.Diagnostic{}
	for _, dg := range d.Diagnostics() {
		diags[dg.Item] = dg
		if dg.Provider != "gh" {
			t.Errorf("diagnostic %+v", dg)
		}
	}
	for item, want := range map[string]string{
		"skill triage.js":    "ok",
		"skill plain.mjs":    "ok",
		"skill nometa.js":    "warning no meta",
		"skill broken.js":    "skipped SyntaxError: Unexpected end of input (line 2, column 16)",
		"skill norun.js":     "skipped no run function",
		"skill warn.js":      "warning meta.related[0].target must be",
		"skill dup.js":       "warning no meta",
		"skill dup.mjs":      `skipped skill "dup" is already defined by dup.js`,
		"skill bad name!.js": "skipped skill name",
		"skill sub.js":       "skipped not a regular file",
	} {
		dg, ok := diags[item]
		got := dg.Status + " " + dg.Reason
		if !ok || !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want %q", item, got, want)
		}
	}
	if len(diags) != 10 {
		t.Errorf("%d diagnostics: %v", len(diags), diags)
	}
	if !strings.Contains(log.String(), "skill skipped") {
		t.Errorf("skips not logged: %s", log)
	}
	res, err := d.RunSkill(context.Background(), "dup", nil, &fakeCaller{})
	if err != nil || res.Text != "null" {
		t.Errorf("dup runs dup.js: %v %v", res, err)
	}

	// Edit, save, run: no restart.
	if err := os.WriteFile(filepath.Join(dir, "plain.mjs"), []byte("const meta = {description: 'Edited.'};\nfunction run() { return 2 }"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "dup.js")); err != nil {
		t.Fatal(err)
	}
	skills, _ = d.Skills(context.Background())
	if skills[2].Name != "plain" || skills[2].Description != "Edited." {
		t.Errorf("after edit: %+v", skills)
	}
	res, err = d.RunSkill(context.Background(), "dup", nil, &fakeCaller{})
	if err != nil || res.Text != "mjs" {
		t.Errorf("after removing dup.js: %v %v", res, err)
	}
}

func TestDirAbsentAndUnreadable(t *testing.T) {
	d := NewDir(info, filepath.Join(t.TempDir(), "missing"), Options{})
	skills, err := d.Skills(context.Background())
	if err != nil || len(skills) != 0 {
		t.Errorf("%v %v", skills, err)
	}
	if dg := d.Diagnostics(); len(dg) != 1 || dg[0].Status != "ok" || !strings.Contains(dg[0].Reason, "absent") {
		t.Errorf("%v", dg)
	}
	file := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(file, nil, 0o644)
	d = NewDir(info, file, Options{Logger: slog.New(slog.DiscardHandler)})
	if skills, err := d.Skills(context.Background()); err != nil || len(skills) != 0 {
		t.Errorf("%v %v", skills, err)
	}
	if dg := d.Diagnostics(); len(dg) != 1 || dg[0].Status != "failed" {
		t.Errorf("%v", dg)
	}
}

func TestConcurrentRuns(t *testing.T) {
	d, _, _ := newDir(t, Options{}, map[string]string{"triage.js": triage})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := d.RunSkill(context.Background(), "triage", json.RawMessage(`{"days": 1}`), issuesCaller())
			if err == nil && res.Text != `{"provider":"gh","labelled":[1,2,3]}` {
				err = errors.New(res.Text)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// lifecycle is a provider with every optional phase.
type lifecycle struct {
	*providertest.Fake
	started, closed int
}

func (l *lifecycle) Start(context.Context) error { l.started++; return nil }
func (l *lifecycle) Close() error                { l.closed++; return nil }
func (l *lifecycle) Diagnostics() []provider.Diagnostic {
	return []provider.Diagnostic{{Provider: "gh", Item: "inner", Status: "ok"}}
}

func TestWrap(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "triage.js"), []byte(triage), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "own.js"), []byte("const meta = {description: 'file'}; function run() { return 'file' }"), 0o644)
	fake := providertest.New(info, providertest.Tool("list_issues", "List issues", "", true))
	fake.SetSkills(catalog.Skill{Provider: "gh", Name: "own", Description: "the provider's"})
	inner := &lifecycle{Fake: fake}

	if Wrap(inner, "", Options{}) != provider.Provider(inner) {
		t.Error("Wrap with no dir must return the provider itself")
	}
	p := Wrap(inner, dir, Options{Logger: slog.New(slog.DiscardHandler)})
	w := p.(*Wrapped)
	if p.Info() != info || w.Unwrap() != provider.Provider(inner) {
		t.Errorf("info %+v", p.Info())
	}
	tools, _ := p.Tools(context.Background())
	if len(tools) != 1 || tools[0].Name != "list_issues" {
		t.Errorf("tools %v", tools)
	}
	if res, err := p.Call(context.Background(), tools[0], json.RawMessage(`{}`)); err != nil || res.Text != "list_issues({})" {
		t.Errorf("call %v %v", res, err)
	}
	sk := p.(provider.Skiller)
	skills, _ := sk.Skills(context.Background())
	if len(skills) != 2 || skills[0].Name != "own" || skills[0].Description != "the provider's" || skills[1].Name != "triage" {
		t.Errorf("merged skills %+v", skills)
	}
	// The provider's own skill wins its name; the file's run the rest.
	res, err := sk.RunSkill(context.Background(), "own", json.RawMessage(`{"tools": ["gh_x"], "args": {}}`), &fakeCaller{fn: func(context.Context, string, json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: "X"}, nil
	}})
	if err != nil || res.Text != "own: X" {
		t.Errorf("own: %v %v", res, err)
	}
	if _, err := sk.RunSkill(context.Background(), "triage", json.RawMessage(`{"days": 1}`), issuesCaller()); err != nil {
		t.Errorf("triage: %v", err)
	}
	_ = p.(provider.Starter).Start(context.Background())
	_ = p.(provider.Closer).Close()
	if inner.started != 1 || inner.closed != 1 {
		t.Errorf("started %d closed %d", inner.started, inner.closed)
	}
	diags := p.(provider.Diagnoser).Diagnostics()
	if len(diags) != 3 || diags[0].Item != "inner" {
		t.Errorf("diagnostics %v", diags)
	}
	// Without optional phases the forwarders are no-ops.
	bare := Wrap(providertest.New(info), dir, Options{})
	if err := bare.(provider.Starter).Start(context.Background()); err != nil {
		t.Error(err)
	}
	if err := bare.(provider.Closer).Close(); err != nil {
		t.Error(err)
	}
}

func TestCheckRelated(t *testing.T) {
	all := []catalog.Skill{
		{Provider: "gh", Name: "triage", Related: []catalog.Related{{Target: "gh:open-pr"}, {Target: "ghcli:pr"}}},
		{Provider: "ghcli", Name: "pr", Related: []catalog.Related{{Target: "gh:triage"}, {Target: "n8n:gone", Why: "old"}}},
	}
	log := &testutil.SyncBuffer{}
	diags := CheckRelated(all, slog.New(slog.NewTextHandler(log, nil)))
	want := []provider.Diagnostic{
		{Provider: "gh", Item: "skill triage", Status: "warning", Reason: `related target "gh:open-pr" names no loaded skill`},
		{Provider: "ghcli", Item: "skill pr", Status: "warning", Reason: `related target "n8n:gone" names no loaded skill`},
	}
	if fmt.Sprint(diags) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", diags, want)
	}
	if strings.Count(log.String(), "skill related target unknown") != 2 {
		t.Errorf("log %s", log)
	}
	if len(CheckRelated(nil, nil)) != 0 {
		t.Error("nothing to check")
	}
}

func TestFilesAndOwnNames(t *testing.T) {
	dir := t.TempDir()
	_ = os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
	// A seed-style skill: run(adapter, args) calling the provider's own tool names.
	_ = os.WriteFile(filepath.Join(dir, "skills", "find.mjs"), []byte(`export const meta = {description: 'Find workflows.'};
export async function run(adapter, args) {
  const own = await adapter.call("list_issues", {q: args.q});
  const other = await adapter.call("ghcli_pr_list", {});
  return [own.tool, other.tool];
}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "ignored.js"), []byte("function run() {}"), 0o644)
	fake := providertest.New(info, providertest.Tool("list_issues", "List issues", "", true))
	p := Wrap(fake, dir, Options{Files: []string{"./skills/find.mjs", "skills/missing.mjs", "notes.txt"}, Logger: slog.New(slog.DiscardHandler)})
	skills, _ := p.(provider.Skiller).Skills(context.Background())
	if len(skills) != 1 || skills[0].Name != "find" {
		t.Fatalf("skills %+v", skills)
	}
	tc := &fakeCaller{}
	res, err := p.(provider.Skiller).RunSkill(context.Background(), "find", json.RawMessage(`{"q": "x"}`), tc)
	if err != nil || res.Text != `["gh_list_issues","ghcli_pr_list"]` {
		t.Errorf("%v %v", res, err)
	}
	got := map[string]string{}
	for _, d := range p.(provider.Diagnoser).Diagnostics() {
		got[d.Item] = d.Status + " " + d.Reason
	}
	if got["skill skills/find.mjs"] != "ok " || !strings.HasPrefix(got["skill skills/missing.mjs"], "skipped cannot stat") ||
		got["skill notes.txt"] != "skipped not a .js or .mjs file" || len(got) != 3 {
		t.Errorf("diagnostics %v", got)
	}
}

// A skill that exhausts its process's memory fails alone with the cause in
// words; the next run of another skill works (in both runners' wiring: the
// server's isolated one here).
func TestSkillMemoryBomb(t *testing.T) {
	if ok, why := jsrun.Isolation(); !ok {
		t.Skip(why)
	}
	d, _, _ := newDir(t, Options{Memory: 64 << 20, CPU: 2 * time.Second, Timeout: 10 * time.Second}, map[string]string{
		"bomb.js": `function run() { const s = "x".repeat(1 << 24); return new Array(1 << 22).join(s).length }`,
		"ok.js":   `function run(tools, args) { return tools.call("t", {n: args.n}) }`,
	})
	start := time.Now()
	_, err := d.RunSkill(context.Background(), "bomb", nil, &fakeCaller{})
	te, ok := toolerr.As(err)
	if !ok || te.Code != toolerr.BackendError || !strings.Contains(te.Message, `skill "bomb" failed: the script used more than 64 MiB`) {
		t.Fatalf("bomb: %v", err)
	}
	if took := time.Since(start); took > 11*time.Second {
		t.Fatalf("bomb took %s", took)
	}
	tc := &fakeCaller{}
	if _, err := d.RunSkill(context.Background(), "ok", json.RawMessage(`{"n": 1}`), tc); err != nil || len(tc.Calls()) != 1 {
		t.Fatalf("after the bomb: %v %v", err, tc.Calls())
	}
}
