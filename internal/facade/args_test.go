package facade

import (
	"encoding/json"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"testing"
)

func TestCallRequestParsing(t *testing.T) {
	tests := []struct {
		raw       string
		tool      string
		confirm   bool
		malformed bool
		tokens    bool
	}{
		{`{"toolName":"x","arguments":{"a":1},"confirm":true}`, "x", true, false, false},
		{`{"toolName":"  x  "}`, "x", false, false, false},
		{``, "", false, false, false},
		{`null`, "", false, false, false},
		{`{"toolName":1}`, "", false, true, false},
		{`{"toolName":"x","confirm":"ct_token"}`, "x", false, false, true},
		{`{"toolName":"x","confirm":"yes"}`, "", false, true, false},
		{`{"toolName":"x","confirm":true}`, "x", true, false, true},
		{`{"toolName":"x","confirm":3}`, "", false, true, false},
		{`{"toolName":"x","arguments":"{}"}`, "x", false, true, false},
		{`{"toolName":"x","arguments":[1]}`, "x", false, true, false},
		{`{"toolName":"x","extra":1}`, "", false, true, false},
		{`[1,2]`, "", false, true, false},
		{`{"toolName":"x","arguments":null}`, "x", false, false, false},
		{`{"tool":"x"}`, "x", false, false, false}, // search mode's spelling
		{`{"tool":"x","toolName":"x"}`, "", false, true, false},
	}
	for _, tc := range tests {
		req := callRequest(json.RawMessage(tc.raw), "via", "toolName", tc.tokens, progressiveShape{via: "via"})
		if (req.Malformed != nil) != tc.malformed {
			t.Errorf("%s: malformed = %v", tc.raw, req.Malformed)
			continue
		}
		if req.Malformed != nil && req.Malformed.Details["correct_shape"] == nil {
			t.Errorf("%s: malformed call without correct_shape: %v", tc.raw, req.Malformed)
		}
		if !tc.malformed && (req.Tool != tc.tool || req.Confirm != tc.confirm) {
			t.Errorf("%s: got tool %q confirm %v", tc.raw, req.Tool, req.Confirm)
		}
	}
}

// FuzzCallRequest: any bytes a client sends as arguments give either a
// request or a Malformed error, never a panic, and a parsed request always
// carries object (or absent) arguments.
// Both spellings of the name key work in both modes; every malformed call
// gets the exact call to make instead.
func TestCallShapes(t *testing.T) {
	tests := []struct {
		name, raw, nameKey string
		shape              any
		wantTool           string
		want               string // correct_shape as JSON, "" when the call is fine
	}{
		{"search spelling in progressive", `{"tool":"echo","arguments":{"m":1}}`, "toolName", progressiveShape{via: "agent_tools_ev_call"}, "echo", ""},
		{"progressive spelling in search", `{"toolName":"ev_echo"}`, "tool", searchShape{}, "ev_echo", ""},
		{"spread arguments", `{"tool":"ev_echo","message":"x"}`, "tool", searchShape{},
			"", `{"arguments":{"arguments":{"message":"x"},"tool":"ev_echo"},"tool":"agent_tools_call"}`},
		{"spread arguments, progressive", `{"toolName":"echo","message":"x","confirm":true}`, "toolName", progressiveShape{via: "agent_tools_ev_call"},
			"", `{"arguments":{"arguments":{"message":"x"},"confirm":true,"toolName":"echo"},"tool":"agent_tools_ev_call"}`},
		{"arguments as a JSON string", `{"tool":"ev_echo","arguments":"{\"message\":\"x\"}"}`, "tool", searchShape{},
			"", `{"arguments":{"arguments":{"message":"x"},"tool":"ev_echo"},"tool":"agent_tools_call"}`},
		{"not an object", `[1]`, "tool", searchShape{}, "", `{"arguments":{"arguments":{},"tool":"\u003ctool name\u003e"},"tool":"agent_tools_call"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := callRequest(json.RawMessage(tt.raw), "via", tt.nameKey, false, tt.shape.(pipeline.Shape))
			if tt.want == "" {
				if req.Malformed != nil || req.Tool != tt.wantTool {
					t.Fatalf("got tool %q, err %v", req.Tool, req.Malformed)
				}
				return
			}
			if req.Malformed == nil {
				t.Fatalf("accepted %s", tt.raw)
			}
			got, _ := json.Marshal(req.Malformed.Details["correct_shape"])
			if string(got) != tt.want {
				t.Fatalf("correct_shape = %s\nwant %s", got, tt.want)
			}
		})
	}
}

func FuzzCallRequest(f *testing.F) {
	for _, s := range []string{`{"toolName":"x","arguments":{"a":[1,{"b":null}]},"confirm":true}`, `{"arguments":{"toolName":"y"}}`, `{`, `"x"`, `{"toolName":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 128 { // bounded: keeps the fuzzer's minimisation cheap
			return
		}
		req := callRequest(raw, "via", "toolName", false, searchShape{})
		if req.Malformed != nil {
			if req.Malformed.Details["correct_shape"] == nil {
				t.Fatalf("malformed call without correct_shape: %+v", req.Malformed)
			}
			if req.Malformed.Code == "" || req.Malformed.Hint == "" {
				t.Fatalf("error without code or hint: %+v", req.Malformed)
			}
			return
		}
		if len(req.Args) > 0 && string(req.Args) != "null" && !isObject(req.Args) {
			t.Fatalf("non-object arguments accepted: %s", req.Args)
		}
	})
}

func FuzzSplitConfirm(f *testing.F) {
	f.Add([]byte(`{"a":1,"agent_tools_confirm":true}`))
	f.Add([]byte(`{"agent_tools_confirm":"true"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 256 { // bounded: keeps the fuzzer's minimisation cheap
			return
		}
		out, _ := splitConfirm(raw, true)
		var m map[string]json.RawMessage
		if json.Unmarshal(out, &m) == nil {
			if _, still := m[ConfirmArg]; still {
				t.Fatalf("confirm flag leaked to the backend: %s", out)
			}
		}
	})
}
