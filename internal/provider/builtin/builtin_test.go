package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func tool(t *testing.T, p *Provider, name string) catalog.Tool {
	t.Helper()
	tools, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return catalog.Tool{}
}

func TestTools(t *testing.T) {
	p := New(Options{})
	tools, _ := p.Tools(context.Background())
	if len(tools) != 2 {
		t.Fatalf("%d tools", len(tools))
	}
	for _, tl := range tools {
		var schema map[string]any
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s: %v", tl.Name, tl.InputSchema, err)
		}
		if !tl.ReadOnly || tl.Provider != ID || tl.Description == "" {
			t.Errorf("%s: %+v", tl.Name, tl)
		}
	}
	js := tool(t, p, JavaScriptTool)
	for _, word := range []string{"calculation", "cannot read or write files", "network", "timeout_ms", "30,000", "200 console"} {
		if !strings.Contains(strings.ToLower(js.Description), strings.ToLower(word)) && !strings.Contains(js.Description, word) {
			t.Errorf("description lacks %q", word)
		}
	}
	if js.Timeout <= DefaultCodeTimeout {
		t.Errorf("tool timeout %v would cut a %v run", js.Timeout, DefaultCodeTimeout)
	}
	// One timeout, stated truthfully: the schema's default and maximum,
	// the description and the pipeline's deadline agree with code.timeout.
	for _, o := range []Options{{}, {Code: CodeOptions{Timeout: 7 * time.Second, Memory: 64 << 20, CPU: 2 * time.Second}}} {
		js := tool(t, New(o), JavaScriptTool)
		want := o.scriptLimits()
		var schema struct {
			Properties struct {
				TimeoutMS struct {
					Maximum     int64  `json:"maximum"`
					Description string `json:"description"`
				} `json:"timeout_ms"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(js.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		tm := schema.Properties.TimeoutMS
		if tm.Maximum != want.Timeout.Milliseconds() || !strings.Contains(tm.Description, fmt.Sprintf("default and maximum %d", want.Timeout.Milliseconds())) ||
			!strings.Contains(js.Description, want.Timeout.String()+" of wall time") || !strings.Contains(js.Description, want.CPU.String()+" of CPU") ||
			!strings.Contains(js.Description, sizeText(want.Memory)+" of memory") || js.Timeout != want.Timeout+2*jsrun.Grace {
			t.Errorf("%+v: schema %s, description %q, deadline %v", o.Code, js.InputSchema, js.Description, js.Timeout)
		}
	}
	if l := (Options{}).scriptLimits(); l.Timeout != 30*time.Second || l.Memory != 256<<20 || l.CPU != 10*time.Second {
		t.Errorf("defaults %+v", l)
	}
	if !p.Info().HostLocal || p.Info().ID != ID {
		t.Errorf("info %+v", p.Info())
	}
}

func callJS(t *testing.T, p *Provider, ctx context.Context, args string) (*provider.Result, error) {
	t.Helper()
	return p.Call(ctx, tool(t, p, JavaScriptTool), json.RawMessage(args))
}

func TestExecuteJavaScript(t *testing.T) {
	p := New(Options{JavaScript: JavaScriptLimits{Timeout: 20 * time.Second}})
	res, err := callJS(t, p, context.Background(), `{"code": "console.warn('w'); const xs = [1, 2, 3]; ({sum: xs.reduce((a, b) => a + b), n: xs.length})"}`)
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var got struct {
		Result    map[string]any `json:"result"`
		Console   []jsrun.Entry  `json:"console"`
		Truncated bool           `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		t.Fatalf("text %q: %v", res.Text, err)
	}
	if got.Result["sum"] != 6.0 || got.Result["n"] != 3.0 || got.Truncated || len(got.Console) != 1 || got.Console[0] != (jsrun.Entry{Level: "warn", Text: "w"}) {
		t.Errorf("got %+v", got)
	}
	if res.Text != `{"result":{"sum":6,"n":3},"console":[{"level":"warn","text":"w"}],"truncated":false}` {
		t.Errorf("text %s", res.Text)
	}
	if b, _ := json.Marshal(res.Structured); string(b) != res.Text {
		t.Errorf("structured %s differs from text", b)
	}

	res, err = callJS(t, p, context.Background(), `{"code": "'x'.repeat(40000)"}`)
	if err != nil || !strings.HasSuffix(res.Text, `"truncated":true}`) {
		t.Errorf("big output: %v %.80s", err, res.Text)
	}
}

func TestExecuteJavaScriptException(t *testing.T) {
	p := New(Options{JavaScript: JavaScriptLimits{Timeout: 20 * time.Second}})
	res, err := callJS(t, p, context.Background(), `{"code": "console.log('start');\nconst o = null;\no.field"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "TypeError") || !strings.Contains(res.Text, "line 3") {
		t.Fatalf("result %+v", res)
	}
	je, _ := res.Details["js_error"].(map[string]any)
	if je["kind"] != jsrun.KindException || je["line"] != 3 || je["stack"] == nil {
		t.Errorf("js_error %v", je)
	}
	if c, _ := res.Details["console"].([]jsrun.Entry); len(c) != 1 || c[0].Text != "start" {
		t.Errorf("console %v", res.Details["console"])
	}

	res, err = callJS(t, p, context.Background(), `{"code": "let = ;"}`)
	if err != nil || !res.IsError || res.Details["js_error"].(map[string]any)["kind"] != jsrun.KindSyntax {
		t.Errorf("syntax error: %v %+v", err, res)
	}
}

func TestExecuteJavaScriptTimeout(t *testing.T) {
	p := New(Options{})
	start := time.Now()
	_, err := callJS(t, p, context.Background(), `{"code": "console.log('spin'); while (true) {}", "timeout_ms": 100}`)
	te, ok := toolerr.As(err)
	if !ok || te.Code != toolerr.Timeout || !strings.Contains(te.Message, "100ms") {
		t.Fatalf("err %v, want TIMEOUT after 100ms", err)
	}
	if c, _ := te.Details["console"].([]jsrun.Entry); len(c) != 1 {
		t.Errorf("details %v", te.Details)
	}
	if took := time.Since(start); took > 100*time.Millisecond+jsrun.Grace+2*time.Second {
		t.Errorf("took %v", took)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = callJS(t, p, ctx, `{"code": "while (true) {}", "timeout_ms": 10000}`)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
}

func TestExecuteJavaScriptArguments(t *testing.T) {
	p := New(Options{})
	for _, args := range []string{
		``, `{}`, `{"code": ""}`, `{"code": 5}`, `{"code": "1", "extra": 1}`, `{"code": "1", "timeout_ms": 0}`,
		`{"code": "1", "timeout_ms": 30001}`, `{"code": "1", "timeout_ms": 1.5}`, `{"code": "1", "timeout_ms": "5"}`, `[]`,
	} {
		_, err := callJS(t, p, context.Background(), args)
		te, ok := toolerr.As(err)
		if !ok || te.Code != toolerr.InvalidArguments || te.Details["expected_schema"] == nil {
			t.Errorf("%s: err %v, want INVALID_ARGUMENTS with the schema", args, err)
		}
	}
	res, err := callJS(t, p, context.Background(), `{"code": "2 * 21", "timeout_ms": 5000.0}`)
	if err != nil || !strings.Contains(res.Text, `"result":42`) {
		t.Errorf("integral float timeout: %v %v", res, err)
	}
}

func TestStatusTool(t *testing.T) {
	p := New(Options{Status: func(context.Context) any { return map[string]any{"version": "v1"} }})
	res, err := p.Call(context.Background(), tool(t, p, StatusTool), nil)
	if err != nil || !strings.Contains(res.Text, `"version": "v1"`) {
		t.Errorf("%v %v", res, err)
	}
	if _, err := p.Call(context.Background(), catalog.Tool{Name: "nope"}, nil); err == nil {
		t.Error("unknown tool accepted")
	}
}
