package app_test

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strings"
	"testing"
)

// TestModelTextIsNotHTMLEscaped: every text a model reads (help, text
// mode, errors with their retry, a script's structured echo, a JavaScript
// stack trace) keeps <, > and & as written: \u003c, \u003e and \u0026 are
// noise to a model and this text never goes into HTML.
func TestModelTextIsNotHTMLEscaped(t *testing.T) {
	p := newProject(t)
	p.script(t, "touch", "#!/bin/sh\n# @description Touch a <file> && more.\n# @param *file string The <file>\necho touched\n")
	calls := []struct {
		mode, tool string
		args       map[string]any
		want       string // proves the output holds the characters at all
	}{
		{"text", "agent_tools_exec", map[string]any{"command": "help"}, "<provider>"},
		{"text", "agent_tools_exec", map[string]any{"command": "call nope<x>"}, "<"},
		{"progressive", "agent_tools_help", map[string]any{}, "<"},
		{"progressive", "agent_tools_local_call", map[string]any{"toolName": "touch", "arguments": map[string]any{"file": "a<b>&c"}}, "a<b>&c"},
		{"progressive", "agent_tools_local_call", map[string]any{"arguments": map[string]any{}}, "<tool name>"},
		{"flat", "touch", map[string]any{"file": "x&&y"}, "x&&y"},
		{"flat", "execute_javascript", map[string]any{"code": "function f() { throw new Error('a < b && c > d') }; f()"}, "a < b && c > d"},
		{"flat", "execute_javascript", map[string]any{"code": "({html: '<b>&</b>'})"}, "<b>&</b>"},
	}
	for _, c := range calls {
		_, cs := p.connect(t, c.mode, nil)
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s %s: %v", c.mode, c.tool, err)
		}
		got := text(res)
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(got, esc) {
				t.Errorf("%s %s %v: %s in the text:\n%s", c.mode, c.tool, c.args, esc, got)
			}
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s %s %v: lacks %q:\n%s", c.mode, c.tool, c.args, c.want, got)
		}
	}
}
