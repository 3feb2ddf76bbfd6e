package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	agenttools "github.com/agent-tools/agent-tools"
)

// fake is a Provider as an outside module writes one, with every optional
// capability, counting what the runtime did with it.
type fake struct {
	id      string
	tools   func() []*agenttools.Tool
	call    func(call *agenttools.CallInfo, args json.RawMessage) (*agenttools.Result, error)
	starts  atomic.Int32
	closes  atomic.Int32
	mu      sync.Mutex
	changed func()
}

var (
	_ agenttools.Provider       = (*fake)(nil)
	_ agenttools.Starter        = (*fake)(nil)
	_ agenttools.Closer         = (*fake)(nil)
	_ agenttools.ChangeNotifier = (*fake)(nil)
)

func (f *fake) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{ID: f.id, Description: "A fake backend."}
}
func (f *fake) Tools(context.Context) ([]*agenttools.Tool, error) { return f.tools(), nil }
func (f *fake) Call(_ context.Context, c *agenttools.CallInfo, args json.RawMessage) (*agenttools.Result, error) {
	return f.call(c, args)
}
func (f *fake) Start(context.Context) error { f.starts.Add(1); return nil }
func (f *fake) Close() error                { f.closes.Add(1); return nil }
func (f *fake) NotifyChanges(changed func()) {
	f.mu.Lock()
	f.changed = changed
	f.mu.Unlock()
}

var countSchema = &jsonschema.Schema{Type: "object", Required: []string{"n"},
	Properties: map[string]*jsonschema.Schema{"n": {Type: "integer", Minimum: jsonschema.Ptr(1.0)}}}

func newFake() *fake {
	return &fake{
		id: "store",
		tools: func() []*agenttools.Tool {
			return []*agenttools.Tool{
				{Action: "count", Description: "Count.", ReadOnly: true},
				{Action: "restock", Description: "Restock n items.", InputSchema: countSchema},
				{Action: "refuse", Description: "Always refuses.", ReadOnly: true},
				{Action: "fail", Description: "The backend says no.", ReadOnly: true},
			}
		},
		call: func(c *agenttools.CallInfo, args json.RawMessage) (*agenttools.Result, error) {
			switch c.Action {
			case "count":
				return &agenttools.Result{Text: "3 as " + c.Tool, Structured: map[string]any{"n": 3}}, nil
			case "restock":
				return &agenttools.Result{Text: "restocked " + string(args)}, nil
			case "refuse":
				return nil, &agenttools.ToolError{Code: agenttools.CodeDenied, Message: "the store is closed", Hint: "Try tomorrow.",
					Body: map[string]any{"error": map[string]any{"opens_at": "09:00"}}}
			case "fail":
				return &agenttools.Result{Text: "out of stock", IsError: true}, nil
			}
			return nil, errors.New("no such tool")
		},
	}
}

// TestProviderTakesThePipeline: an added Provider's calls are validated,
// confirmed and audited like every other; its ToolError keeps its code,
// hint and details; a Result with IsError is a BACKEND_ERROR.
func TestProviderTakesThePipeline(t *testing.T) {
	var audit strings.Builder
	var auditMu sync.Mutex
	rt := newRT(t, agenttools.Options{AuditLog: writerFunc(func(p []byte) (int, error) {
		auditMu.Lock()
		defer auditMu.Unlock()
		return audit.Write(p)
	})})
	f := newFake()
	if err := rt.AddProvider(f); err != nil {
		t.Fatal(err)
	}
	start(t, rt)
	ctx := context.Background()
	for _, tc := range []struct {
		name, tool string
		args       any
		code, want string
	}{
		{"read-only runs", "store_count", nil, "", "3 as store_count"},
		{"a bad argument teaches", "store_restock", map[string]any{"n": 0}, agenttools.CodeInvalidArguments, "n"},
		{"a missing argument teaches", "store_restock", map[string]any{}, agenttools.CodeInvalidArguments, "n"},
		{"a mutating tool asks for confirmation", "store_restock", map[string]any{"n": 2}, agenttools.CodeConfirmationRequired, ""},
		{"confirmed, it runs", "store_restock", map[string]any{"n": 2, agenttools.ConfirmArg: true}, "", `restocked {"n":2}`},
		{"its ToolError passes through", "store_refuse", nil, agenttools.CodeDenied, "Try tomorrow."},
		{"IsError is a backend error", "store_fail", nil, agenttools.CodeBackendError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := rt.Call(ctx, tc.tool, tc.args)
			if got := code(err); got != tc.code {
				t.Fatalf("code = %q, want %q (%v)", got, tc.code, err)
			}
			if tc.code == "" {
				if res.Text != tc.want {
					t.Errorf("text = %q, want %q", res.Text, tc.want)
				}
				return
			}
			te := err.(*agenttools.ToolError)
			if !strings.Contains(te.Message+" "+te.Hint, tc.want) {
				t.Errorf("%q / %q does not mention %q", te.Message, te.Hint, tc.want)
			}
		})
	}
	_, err := rt.Call(ctx, "store_refuse", nil)
	var te *agenttools.ToolError
	if errors.As(err, &te) {
		if inner, _ := te.Body["error"].(map[string]any); inner["opens_at"] != "09:00" || te.Hint != "Try tomorrow." {
			t.Errorf("the provider's details or hint were lost: %v", te.Body)
		}
	}
	auditMu.Lock()
	logged := audit.String()
	auditMu.Unlock()
	if !strings.Contains(logged, `"store_restock"`) {
		t.Errorf("the provider's calls are not audited:\n%s", logged)
	}
	if f.starts.Load() != 1 {
		t.Errorf("Start ran %d times, want 1", f.starts.Load())
	}
	rt.Close()
	if f.closes.Load() != 1 {
		t.Errorf("Close ran %d times, want 1", f.closes.Load())
	}
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }

// TestProviderChangeNotifier: a provider that reports a change has its new
// list served at once, and every session hears of it.
func TestProviderChangeNotifier(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	f := newFake()
	var extra atomic.Bool
	base := f.tools
	f.tools = func() []*agenttools.Tool {
		ts := base()
		if extra.Load() {
			ts = append(ts, &agenttools.Tool{Namespace: "store", Action: "audit", Description: "Audit.", ReadOnly: true})
		}
		return ts
	}
	must(t, rt.AddProvider(f))
	start(t, rt)
	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	f.mu.Lock()
	changed := f.changed
	f.mu.Unlock()
	if changed == nil {
		t.Fatal("NotifyChanges was not called")
	}
	extra.Store(true)
	changed()
	<-s.ToolsChanged()
	tools, err := s.Tools()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, tl := range tools {
		found = found || tl.Name == "store_audit"
	}
	if !found {
		t.Errorf("store_audit is not listed after the change: %v", tools)
	}
}

// TestProviderErrors: what AddProvider refuses at once, and a bad listing
// that fails the provider (its tools are not served) instead of the runtime.
func TestProviderErrors(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	must(t, rt.AddPlugin("booking", agenttools.PluginOptions{}))
	for _, tc := range []struct {
		name string
		p    agenttools.Provider
		want string
	}{
		{"nil", nil, "nil provider"},
		{"bad id", &fake{id: "Store"}, "snake_case"},
		{"a plugin's id", &fake{id: "booking"}, "already added"},
	} {
		if err := rt.AddProvider(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := rt.AddProvider(newFake()); err != nil {
		t.Fatal(err)
	}
	if err := rt.AddProvider(newFake()); err == nil || !strings.Contains(err.Error(), "already added") {
		t.Errorf("a second provider of the same id: %v", err)
	}
	if err := rt.AddPlugin("store", agenttools.PluginOptions{}); err == nil || !strings.Contains(err.Error(), "provider's id") {
		t.Errorf("a plugin with a provider's id: %v", err)
	}
	for _, tc := range []struct {
		name  string
		tools []*agenttools.Tool
		want  string
	}{
		{"another namespace", []*agenttools.Tool{{Namespace: "other", Action: "x", Description: "X."}}, "own namespace"},
		{"a camelCase action", []*agenttools.Tool{{Action: "doIt", Description: "X."}}, "snake_case"},
		{"no description", []*agenttools.Tool{{Action: "x"}}, "description is required"},
		{"a duplicate", []*agenttools.Tool{{Action: "x", Description: "X."}, {Action: "x", Description: "X."}}, "listed twice"},
		{"an array schema", []*agenttools.Tool{{Action: "x", Description: "X.", InputSchema: &jsonschema.Schema{Type: "array"}}}, `want "object"`},
		{"a nil tool", []*agenttools.Tool{nil}, "nil tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRT(t, agenttools.Options{})
			f := newFake()
			f.id = "bad"
			f.tools = func() []*agenttools.Tool { return tc.tools }
			if err := rt.AddProvider(f); err != nil {
				t.Fatal(err)
			}
			start(t, rt)
			// The provider is unavailable, and the agent is told why.
			_, err := rt.Call(context.Background(), "bad_x", nil)
			if code(err) != agenttools.CodeProviderUnavailable || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("a call into a bad listing: %v, want PROVIDER_UNAVAILABLE saying %q", err, tc.want)
			}
		})
	}
	start(t, rt)
	late := newFake()
	late.id = "late"
	if err := rt.AddProvider(late); err == nil || !strings.Contains(err.Error(), "before Start") {
		t.Errorf("AddProvider after Start: %v", err)
	}
}

// TestHandlerToolError: a handler's *ToolError reaches the agent with its
// code and hint, wrapped or not; any other error is a BACKEND_ERROR.
func TestHandlerToolError(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	for action, err := range map[string]error{
		"direct":  &agenttools.ToolError{Code: agenttools.CodeInvalidArguments, Message: "no room 13", Hint: "Call rooms_list."},
		"wrapped": errorsJoin("while booking", &agenttools.ToolError{Code: agenttools.CodeProviderNeedsLogin, Message: "log in", Hint: "Run the login."}),
		"plain":   errors.New("disk full"),
	} {
		must(t, rt.AddTool(&agenttools.Tool{Namespace: "rooms", Action: action, Description: "D.", ReadOnly: true},
			func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return nil, err }))
	}
	start(t, rt)
	for _, tc := range []struct{ action, code, hint string }{
		{"direct", agenttools.CodeInvalidArguments, "Call rooms_list."},
		{"wrapped", agenttools.CodeProviderNeedsLogin, "Run the login."},
		{"plain", agenttools.CodeBackendError, ""},
	} {
		_, err := rt.Call(context.Background(), "rooms_"+tc.action, nil)
		var te *agenttools.ToolError
		if !errors.As(err, &te) || te.Code != tc.code || (tc.hint != "" && te.Hint != tc.hint) {
			t.Errorf("%s: %v (hint %q), want %s with hint %q", tc.action, err, hintOf(te), tc.code, tc.hint)
		}
	}
}

func hintOf(te *agenttools.ToolError) string {
	if te == nil {
		return ""
	}
	return te.Hint
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg + ": " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func errorsJoin(msg string, err error) error { return &wrapped{msg, err} }

// TestConfigError: every config the runtime cannot run with is a
// *ConfigError for errors.As, with the problem in its text.
func TestConfigError(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		o       agenttools.Options
		atStart bool
		want    string
	}{
		{"an unknown mode", agenttools.Options{Mode: "sideways"}, false, "sideways"},
		{"YAML that does not parse", agenttools.Options{ConfigYAML: []byte("mode: [\n")}, true, "ConfigYAML"},
		{"a key that does not exist", agenttools.Options{ConfigYAML: []byte("modes: flat\n")}, true, "modes"},
		{"a file that is not there", agenttools.Options{ConfigFile: filepath.Join(dir, "missing.yaml")}, true, "missing.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := agenttools.New(tc.o)
			if tc.atStart {
				if err != nil {
					t.Fatal(err)
				}
				defer rt.Close()
				err = rt.Start(context.Background())
			}
			var ce *agenttools.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%v (%T) is not a *ConfigError", err, err)
			}
			if !strings.Contains(ce.Error(), tc.want) || ce.Unwrap() == nil {
				t.Errorf("%q does not mention %q", ce.Error(), tc.want)
			}
		})
	}
}

// TestSentinels: errors.Is finds the public sentinels in what the runtime
// returns, and the text is the runtime's own.
func TestSentinels(t *testing.T) {
	rt := newRT(t, agenttools.Options{})
	if err := rt.SetEnabled(context.Background(), "x", true); !errors.Is(err, agenttools.ErrNotStarted) {
		t.Errorf("before Start: %v", err)
	}
	if _, err := rt.Call(context.Background(), "x", nil); !errors.Is(err, agenttools.ErrNotStarted) {
		t.Errorf("Call before Start: %v", err)
	}
	start(t, rt)
	err := rt.SetEnabled(context.Background(), "nope", true)
	if !errors.Is(err, agenttools.ErrUnknownProvider) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown provider: %v", err)
	}
	rt2 := newRT(t, agenttools.Options{ProjectDir: t.TempDir(), ConfigYAML: []byte("providers:\n  - id: gh\n    kind: openapi\n    enabled: false\n" +
		"    spec: ./api.json\n    baseURL: https://api.example.com\n    auth: {bearer: \"${NOT_SET_FOR_THE_TEST}\"}\n"),
		LookupEnv: func(string) (string, bool) { return "", false }})
	start(t, rt2)
	if err := rt2.SetEnabled(context.Background(), "gh", true); !errors.Is(err, agenttools.ErrUnavailable) || !strings.Contains(err.Error(), "NOT_SET_FOR_THE_TEST") {
		t.Errorf("unavailable provider: %v", err)
	}
}

// TestCodesMatchTheRuntime: every error code the runtime can return has
// its exported constant, with the same value: parsed from the runtime's own
// list, so that a new code cannot be forgotten here.
func TestCodesMatchTheRuntime(t *testing.T) {
	internal := constants(t, filepath.Join("internal", "toolerr", "toolerr.go"), "")
	public := map[string]string{}
	for _, f := range []string{"session.go", "agenttools.go", "tools.go", "provider.go"} {
		for k, v := range constants(t, f, "Code") {
			public[strings.TrimPrefix(k, "Code")] = v
		}
	}
	if len(internal) == 0 {
		t.Fatal("no codes found in internal/toolerr")
	}
	for name, v := range internal {
		if public[name] != v {
			t.Errorf("toolerr.%s = %q: agenttools.Code%s = %q", name, v, name, public[name])
		}
	}
	for name := range public {
		if _, ok := internal[name]; !ok {
			t.Errorf("agenttools.Code%s has no code in internal/toolerr", name)
		}
	}
}

// constants returns the string constants of file: the Code-typed ones, or
// those whose name starts with prefix.
func constants(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			typed := false
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Code" {
				typed = true
			}
			for i, n := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				if (prefix == "" && typed) || (prefix != "" && strings.HasPrefix(n.Name, prefix)) {
					out[n.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}
