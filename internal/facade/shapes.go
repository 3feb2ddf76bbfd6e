package facade

import (
	"encoding/json"
)

// progressiveShape renders calls of agent_tools_<id>_call.
type progressiveShape struct{ via string }

func (s progressiveShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	a := map[string]any{"toolName": tool, "arguments": rawOrEmpty(args)}
	if confirm != nil {
		a["confirm"] = confirm
	}
	return map[string]any{"tool": s.via, "arguments": a}
}

// searchShape renders calls of agent_tools_call.
type searchShape struct{}

func (searchShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	a := map[string]any{"tool": tool, "arguments": rawOrEmpty(args)}
	if confirm != nil {
		a["confirm"] = confirm
	}
	return map[string]any{"tool": callTool, "arguments": a}
}

// flatShape renders a direct call of a flat tool.
type flatShape struct{}

func (flatShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	a := map[string]any{}
	_ = json.Unmarshal(rawOrEmpty(args), &a)
	if confirm != nil {
		a[ConfirmArg] = confirm
	}
	return map[string]any{"tool": tool, "arguments": a}
}

func rawOrEmpty(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || !json.Valid(args) {
		return json.RawMessage(`{}`)
	}
	return args
}
