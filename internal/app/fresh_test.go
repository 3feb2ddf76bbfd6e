package app_test

import (
	"context"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"testing"
)

// A script saved a moment ago is callable at once, by name in flat mode and
// through the provider's call tool in progressive mode, whether or not the
// directory watcher has seen it yet: an unknown name gets one rescan before
// UNKNOWN_TOOL. A name that stays unknown still gets UNKNOWN_TOOL.
func TestNewScriptCallableAtOnce(t *testing.T) {
	tests := []struct {
		mode string
		call func(name string) *sdk.CallToolParams
	}{
		{"flat", func(name string) *sdk.CallToolParams { return &sdk.CallToolParams{Name: name} }},
		{"progressive", func(name string) *sdk.CallToolParams {
			return &sdk.CallToolParams{Name: "agent_tools_local_call", Arguments: map[string]any{"toolName": name}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			p := newProject(t)
			p.script(t, "one", "#!/bin/sh\n# @description First.\n# @readonly\necho one\n")
			_, cs := p.connect(t, tt.mode, nil)
			ctx := context.Background()
			if res, err := cs.CallTool(ctx, tt.call("one")); err != nil || res.IsError {
				t.Fatalf("one = %v %v", res, err)
			}
			p.script(t, "fresh", "#!/bin/sh\n# @description Just saved.\n# @readonly\necho fresh\n")
			res, err := cs.CallTool(ctx, tt.call("fresh"))
			if err != nil || res.IsError || text(res) != "fresh\n" {
				t.Fatalf("a script saved a moment ago: %v %v", res, err)
			}
			res, err = cs.CallTool(ctx, tt.call("never_saved"))
			if err != nil || !res.IsError {
				t.Fatalf("unknown name = %v %v", res, err)
			}
		})
	}
}
