package app_test

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"testing"
)

func callJSON(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if res.IsError {
		_ = json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &out)
		return out
	}
	return map[string]any{"text": res.Content[0].(*sdk.TextContent).Text}
}

// TestTokensAndLoopGuardSurviveReload: a confirmation token issued before a
// config reload is redeemed after it, and identical failures keep counting.
func TestTokensAndLoopGuardSurviveReload(t *testing.T) {
	p := newProject(t)
	p.script(t, "deploy", "#!/bin/sh\n# @description Deploy it.\n# @param *env string Where\necho deployed\n")
	p.script(t, "broken", "#!/bin/sh\n# @description Always fails.\n# @readonly\necho nope >&2\nexit 3\n")
	p.file(t, "agent-tools.yaml", "mode: flat\npolicy:\n  confirm: token\n")
	a, cs := p.connect(t, "", nil)

	first := callJSON(t, cs, "deploy", map[string]any{"env": "prod"})
	e, _ := first["error"].(map[string]any)
	tok, _ := e["confirm_token"].(string)
	if e["code"] != "CONFIRMATION_REQUIRED" || tok == "" {
		t.Fatalf("first call = %v", first)
	}
	for range 2 {
		callJSON(t, cs, "broken", nil)
	}
	p.file(t, "agent-tools.yaml", "mode: flat\npolicy:\n  confirm: token\n  deny: [nothing_*]\n")
	if err := a.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := callJSON(t, cs, "deploy", map[string]any{"env": "prod", "agent_tools_confirm": tok})
	if got["text"] != "deployed\n" {
		t.Errorf("token after reload: %v", got)
	}
	third := callJSON(t, cs, "broken", nil)
	if e, _ := third["error"].(map[string]any); e["code"] != "REPEATED_FAILURE" {
		t.Errorf("third identical failure across a reload = %v", third)
	}
}
