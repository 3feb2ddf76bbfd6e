package facade

import (
	"encoding/json"
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
	}
	for _, tc := range tests {
		req := callRequest(json.RawMessage(tc.raw), "via", "toolName", tc.tokens)
		if (req.Malformed != nil) != tc.malformed {
			t.Errorf("%s: malformed = %v", tc.raw, req.Malformed)
			continue
		}
		if !tc.malformed && (req.Tool != tc.tool || req.Confirm != tc.confirm) {
			t.Errorf("%s: got tool %q confirm %v", tc.raw, req.Tool, req.Confirm)
		}
	}
}

// FuzzCallRequest: any bytes a client sends as arguments give either a
// request or a Malformed error, never a panic, and a parsed request always
// carries object (or absent) arguments.
func FuzzCallRequest(f *testing.F) {
	for _, s := range []string{`{"toolName":"x","arguments":{"a":[1,{"b":null}]},"confirm":true}`, `{"arguments":{"toolName":"y"}}`, `{`, `"x"`, `{"toolName":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 256 { // bounded: keeps the fuzzer's minimisation cheap
			return
		}
		req := callRequest(raw, "via", "toolName", false)
		if req.Malformed != nil {
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
