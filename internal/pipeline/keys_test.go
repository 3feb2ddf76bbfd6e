package pipeline

import (
	"encoding/json"
	"github.com/agent-tools/agent-tools/internal/policy"
	"testing"
)

func TestCallKey(t *testing.T) {
	base := Request{Caller: policy.Caller{Identity: "token:ab", Session: "s1"}, Via: "gh_create", Tool: "gh_create", Args: json.RawMessage(`{"a":1,"b":{"y":[1,2],"x":"v"}}`)}
	same := []json.RawMessage{
		json.RawMessage(`{ "b": { "x": "v", "y": [1, 2] }, "a": 1 }`), // Python's default spacing, other order
		json.RawMessage("\n{\"a\":1,\"b\":{\"y\":[1,2],\"x\":\"v\"}}\n"),
	}
	for _, args := range same {
		r := base
		r.Args = args
		if CallKey(&r) != CallKey(&base) {
			t.Errorf("%s: different key for the same call", args)
		}
	}
	differ := map[string]func(r *Request){
		"identity": func(r *Request) { r.Identity = "token:cd" },
		"session":  func(r *Request) { r.Session = "s2" },
		"tool":     func(r *Request) { r.Tool = "gh_delete" },
		"value":    func(r *Request) { r.Args = json.RawMessage(`{"a":2,"b":{"y":[1,2],"x":"v"}}`) },
		"order":    func(r *Request) { r.Args = json.RawMessage(`{"a":1,"b":{"y":[2,1],"x":"v"}}`) },
	}
	for name, change := range differ {
		r := base
		change(&r)
		if CallKey(&r) == CallKey(&base) {
			t.Errorf("%s: same key for a different call", name)
		}
	}
	for in, want := range map[string]string{"": "{}", "null": "{}", "{bad": "{bad", `{"n":1.50}`: `{"n":1.50}`, `{} {}`: `{} {}`} {
		if got := string(CanonicalArgs(json.RawMessage(in))); got != want {
			t.Errorf("CanonicalArgs(%q) = %q, want %q", in, got, want)
		}
	}
}
