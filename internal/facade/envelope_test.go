package facade_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/builtin"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
)

// TestMisspeltEnvelopeKeyIsRead (issue 49, item 4): an envelope key that
// is a near miss of the meta-tool's own (`tool_name`, `ToolName`, `name`
// for the name; `args`, `params`, `input` for the arguments) is read as
// that key, so the call just works when it is unambiguous. When it is not
// (the name given twice, the arguments spread, a tool whose own parameter
// has that name), the teaching error's correct_shape carries the right
// name and the arguments inside `arguments`, never "<tool name>".
func TestMisspeltEnvelopeKeyIsRead(t *testing.T) {
	tests := []struct {
		name, tool string
		args       string
		ran        string // the backend call it makes: tool and arguments
		shape      string // else: the correct_shape, as JSON
	}{
		// Just works.
		{"tool_name", "agent_tools_gh_call", `{"tool_name":"get_repo","arguments":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"tool_name and args", "agent_tools_gh_call", `{"tool_name":"get_repo","args":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"ToolName and params", "agent_tools_gh_call", `{"ToolName":"get_repo","params":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"name and input", "agent_tools_gh_call", `{"name":"get_repo","input":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"tool-name and parameters", "agent_tools_gh_call", `{"tool-name":"get_repo","parameters":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"toolName and Arguments", "agent_tools_gh_call", `{"toolName":"get_repo","Arguments":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"search mode: tool_name and args", "agent_tools_call", `{"tool_name":"gh_get_repo","args":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"search mode: name", "agent_tools_call", `{"name":"gh_get_repo","arguments":{"owner":"a","repo":"b"}}`, `get_repo {"owner":"a","repo":"b"}`, ""},
		{"a tool's own input parameter", "agent_tools_tx_call", `{"tool_name":"transform","arguments":{"input":{"a":1}}}`, `transform({"input":{"a":1}})`, ""},
		// Taught, with the right name and arguments.
		{"tool_name, arguments spread", "agent_tools_gh_call", `{"tool_name":"get_repo","owner":"a","repo":"b"}`, "",
			`{"arguments":{"arguments":{"owner":"a","repo":"b"},"toolName":"get_repo"},"tool":"agent_tools_gh_call"}`},
		{"tool_name beside a name argument", "agent_tools_gh_call", `{"tool_name":"get_repo","name":"x","args":{"owner":"a","repo":"b"}}`, "",
			`{"arguments":{"arguments":{"name":"x","owner":"a","repo":"b"},"toolName":"get_repo"},"tool":"agent_tools_gh_call"}`},
		{"input is the tool's own parameter, spread", "agent_tools_tx_call", `{"tool_name":"transform","input":{"a":1}}`, "",
			`{"arguments":{"arguments":{"input":{"a":1}},"toolName":"transform"},"tool":"agent_tools_tx_call"}`},
		{"search mode: tool_name, arguments spread", "agent_tools_call", `{"tool_name":"gh_get_repo","owner":"a","repo":"b"}`, "",
			`{"arguments":{"arguments":{"owner":"a","repo":"b"},"tool":"gh_get_repo"},"tool":"agent_tools_call"}`},
	}
	for _, mode := range []facade.Mode{facade.Progressive, facade.Search} {
		for _, tc := range tests {
			if strings.HasPrefix(tc.name, "search mode") != (mode == facade.Search) {
				continue
			}
			t.Run(tc.name, func(t *testing.T) {
				tx := providertest.New(catalog.ProviderInfo{ID: "tx", Kind: "fake", Description: "Transforms."},
					providertest.Tool("transform", "Transform an input object.", `{"type":"object","properties":{"input":{"type":"object"}},"required":["input"]}`, true))
				h := newHarness(t, setup{mode: mode, extra: []provider.Provider{tx}})
				text, e := h.call(tc.tool, json.RawMessage(tc.args))
				backend := append(h.gh.Calls(), tx.Calls()...)
				if tc.ran != "" {
					if e != nil || text != tc.ran {
						t.Fatalf("%s %s: got %s, want it to run %s", tc.tool, tc.args, text, tc.ran)
					}
					return
				}
				if e == nil || len(backend) > 0 {
					t.Fatalf("%s %s: ran (%s)", tc.tool, tc.args, text)
				}
				got, _ := json.Marshal(e["correct_shape"])
				if string(got) != tc.shape {
					t.Errorf("%s %s: correct_shape\n  got  %s\n  want %s", tc.tool, tc.args, got, tc.shape)
				}
			})
		}
	}
}

// TestBuiltinCallToolName is the issue's own call: agent_tools_builtin_call
// {"tool_name": "runtime_status"} runs runtime_status.
func TestBuiltinCallToolName(t *testing.T) {
	h := newHarness(t, setup{extra: []provider.Provider{builtin.New(builtin.Options{})}})
	if !slices.Contains(h.names(), "agent_tools_builtin_call") {
		t.Fatalf("tools/list = %v", h.names())
	}
	text, e := h.call("agent_tools_builtin_call", map[string]any{"tool_name": "runtime_status"})
	if e != nil {
		t.Fatalf("agent_tools_builtin_call {tool_name: runtime_status}: %s", text)
	}
}
