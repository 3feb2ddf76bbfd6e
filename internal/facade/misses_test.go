package facade_test

import (
	"context"
	"encoding/json"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// downCanary is a configured secret an upstream's start-up error quotes.
const downCanary = "ev-canary-7f3a91c2"

func init() { redact.Add("EV_KEY", downCanary) }

// downProvider is an upstream that failed to start: no tools, cached or
// live, and a reason that quotes a secret.
func downProvider() *providertest.Fake {
	ev := providertest.New(catalog.ProviderInfo{ID: "ev", Kind: "mcp"})
	ev.SetError(toolerr.New(toolerr.ProviderUnavailable, "Retry once.", "provider %q is unavailable: exit status 1: bad key %s", "ev", downCanary))
	return ev
}

// TestDownProviderIsNotEmpty: a call or search that
// could concern a provider that failed to start says so, with its reason
// (redacted), in every mode, instead of UNKNOWN_TOOL / "Nothing matched".
func TestDownProviderIsNotEmpty(t *testing.T) {
	tests := []struct {
		mode facade.Mode
		tool string
		args any
	}{
		{facade.Search, "agent_tools_call", map[string]any{"tool": "ev_echo", "arguments": map[string]any{"message": "hi"}}},
		{facade.Flat, "ev_echo", map[string]any{"message": "hi"}},
		{facade.Progressive, "agent_tools_ev_call", map[string]any{"toolName": "echo"}},
		{facade.Text, "agent_tools_exec", map[string]any{"command": "call ev_echo message=hi"}},
		{facade.Text, "agent_tools_exec", map[string]any{"command": "ev call echo message=hi"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode)+" "+tc.tool, func(t *testing.T) {
			h := newHarness(t, setup{mode: tc.mode, extra: []provider.Provider{downProvider()}})
			text, e := h.call(tc.tool, tc.args)
			if e == nil || e["code"] != "PROVIDER_UNAVAILABLE" {
				t.Fatalf("got %s, want PROVIDER_UNAVAILABLE", text)
			}
			if !strings.Contains(text, "exit status 1") {
				t.Errorf("the reason is missing: %s", text)
			}
			if strings.Contains(text, downCanary) {
				t.Errorf("the reason leaks a secret: %s", text)
			}
		})
	}
	t.Run("a prefix of nothing down is still UNKNOWN_TOOL", func(t *testing.T) {
		h := newHarness(t, setup{mode: facade.Search, extra: []provider.Provider{downProvider()}})
		if text, e := h.call("agent_tools_call", map[string]any{"tool": "zz_echo"}); e["code"] != "UNKNOWN_TOOL" {
			t.Fatalf("got %s", text)
		}
	})
	for _, mode := range []facade.Mode{facade.Search, facade.Text} {
		t.Run(string(mode)+" search", func(t *testing.T) {
			h := newHarness(t, setup{mode: mode, extra: []provider.Provider{downProvider()}})
			tool, args := "agent_tools_search", map[string]any{"query": "echo"}
			if mode == facade.Text {
				tool, args = "agent_tools_exec", map[string]any{"command": "search echo"}
			}
			text, e := h.call(tool, args)
			if e != nil {
				t.Fatalf("search failed: %s", text)
			}
			var out struct {
				Next        string              `json:"next"`
				Unavailable []map[string]string `json:"unavailable"`
			}
			if err := json.Unmarshal([]byte(text), &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Unavailable) != 1 || out.Unavailable[0]["provider"] != "ev" || !strings.Contains(out.Unavailable[0]["reason"], "exit status 1") {
				t.Errorf("unavailable = %v", out.Unavailable)
			}
			if !strings.Contains(out.Next, "ev") || strings.Contains(text, downCanary) {
				t.Errorf("next = %q (or a leak in %s)", out.Next, text)
			}
		})
	}
}

// TestOtherModesMetaToolsTeach: another mode's meta
// tool answers with this mode's call, not an empty did_you_mean.
func TestOtherModesMetaToolsTeach(t *testing.T) {
	tests := []struct {
		mode  facade.Mode
		tool  string
		args  any
		check string
	}{
		{facade.Flat, "agent_tools_gh_call", map[string]any{"toolName": "get_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}},
			`"correct_shape":{"arguments":{"owner":"a","repo":"b"},"tool":"gh_get_repo"}`},
		{facade.Flat, "agent_tools_call", map[string]any{"tool": "gh_get_repo"}, `"did_you_mean":["gh_get_repo"]`},
		{facade.Search, "agent_tools_gh_call", map[string]any{"toolName": "get_repo"},
			`"correct_shape":{"arguments":{"arguments":{},"tool":"gh_get_repo"},"tool":"agent_tools_call"}`},
		{facade.Search, "agent_tools_gh_discover", map[string]any{"query": "repository stars"},
			`"correct_shape":{"arguments":{"provider":"gh","query":"repository stars"},"tool":"agent_tools_search"}`},
		{facade.Search, "agent_tools_gh_discover", map[string]any{}, `"tool":"agent_tools_search"`},
		{facade.Flat, "agent_tools_gh_discover", map[string]any{"query": "repository metadata stars"}, `"did_you_mean":["gh_get_repo"`},
		{facade.Progressive, "agent_tools_call", map[string]any{"tool": "gh_get_repo"},
			`"correct_shape":{"arguments":{"arguments":{},"toolName":"get_repo"},"tool":"agent_tools_gh_call"}`},
		{facade.Progressive, "agent_tools_search", map[string]any{"query": "stars", "provider": "gh"},
			`"correct_shape":{"arguments":{"query":"stars"},"tool":"agent_tools_gh_discover"}`},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode)+" "+tc.tool, func(t *testing.T) {
			h := newHarness(t, setup{mode: tc.mode})
			text, e := h.call(tc.tool, tc.args)
			if e == nil || e["code"] != "UNKNOWN_TOOL" {
				t.Fatalf("got %s", text)
			}
			if !strings.Contains(text, tc.check) {
				t.Errorf("result %s lacks %s", text, tc.check)
			}
			if e["hint"] == "" {
				t.Errorf("no hint: %s", text)
			}
		})
	}
}

// TestDiscoverPageSaysMore: a page with a next_cursor
// says in "next" that there are more pages and how to get them.
func TestDiscoverPageSaysMore(t *testing.T) {
	h := newHarness(t, setup{})
	text, _ := h.call("agent_tools_gh_discover", map[string]any{"limit": 2})
	var out struct {
		Next       string `json:"next"`
		NextCursor string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	if out.NextCursor != "2" || !strings.Contains(out.Next, "1-2 of 3") || !strings.Contains(out.Next, `cursor "2"`) {
		t.Fatalf("first page = %s", text)
	}
	text, _ = h.call("agent_tools_gh_discover", map[string]any{"limit": 2, "cursor": "2"})
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.Next, "cursor") {
		t.Errorf("last page still points at a cursor: %s", text)
	}
}

// TestFlatPublishesWhatTheUpstreamSaid: a flat tool of
// an upstream MCP server carries its outputSchema, title, icons, _meta and
// annotations (with the runtime's own view of read-only).
func TestFlatPublishesWhatTheUpstreamSaid(t *testing.T) {
	up := providertest.New(catalog.ProviderInfo{ID: "ev", Kind: "mcp", RequireConfirm: true})
	yes := false
	full := providertest.Tool("full", "Does it all.", `{"type":"object"}`, false)
	full.Title = "Full"
	full.OutputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	full.Upstream = &catalog.UpstreamTool{Annotations: &sdk.ToolAnnotations{IdempotentHint: true, ReadOnlyHint: true, DestructiveHint: &yes},
		Icons: json.RawMessage(`[{"src":"https://example.test/i.png"}]`), Meta: json.RawMessage(`{"vendor/x":"y"}`)}
	up.SetTools(full, providertest.Tool("plain", "Plain.", `{"type":"object"}`, true))
	h := newHarness(t, setup{mode: facade.Flat, extra: []provider.Provider{up}})
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	f := got["ev_full"]
	if f == nil {
		t.Fatalf("tools = %v", h.names())
	}
	b, _ := json.Marshal(f)
	for _, want := range []string{`"title":"Full"`, `"outputSchema":{"properties":{"n":{"type":"integer"}},"type":"object"}`,
		`"icons":[{"src":"https://example.test/i.png"}]`, `"_meta":{"vendor/x":"y"}`, `"idempotentHint":true`,
		`"destructiveHint":false`, `"openWorldHint":true`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("ev_full lacks %s: %s", want, b)
		}
	}
	// Not read-only to the runtime (no trustAnnotations): it says so, whatever the upstream hinted.
	if f.Annotations.ReadOnlyHint {
		t.Errorf("readOnlyHint published from an untrusted annotation: %s", b)
	}
	if p := got["ev_plain"]; p == nil || p.OutputSchema != nil || p.Icons != nil || p.Meta != nil {
		t.Errorf("a tool that says nothing more: %+v", p)
	}
	// Other kinds of providers publish as before.
	if g := got["gh_get_repo"]; g == nil || g.Icons != nil || g.Meta != nil {
		t.Errorf("gh_get_repo = %+v", g)
	}
}

// TestDownProviderBackOnCall: a provider that failed, and is up again when
// a call of one of its tools arrives, answers it (the call asks every
// provider again before saying it is unavailable).
func TestDownProviderBackOnCall(t *testing.T) {
	for _, tc := range []struct {
		mode facade.Mode
		tool string
		args any
	}{
		{facade.Search, "agent_tools_call", map[string]any{"tool": "ev_echo", "arguments": map[string]any{}}},
		{facade.Flat, "ev_echo", map[string]any{}},
		{facade.Progressive, "agent_tools_ev_call", map[string]any{"toolName": "echo"}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			ev := downProvider()
			h := newHarness(t, setup{mode: tc.mode, extra: []provider.Provider{ev}})
			ev.SetError(nil)
			ev.SetTools(providertest.Tool("echo", "Echo.", `{"type":"object"}`, true))
			text, e := h.call(tc.tool, tc.args)
			if e != nil || !strings.HasPrefix(text, "echo(") {
				t.Fatalf("got %s", text)
			}
		})
	}
}

// TestOtherModesMetaToolsHideDenied: the answer to another mode's meta
// tool never names a tool policy hides.
func TestOtherModesMetaToolsHideDenied(t *testing.T) {
	h := newHarness(t, setup{mode: facade.Flat, rules: policy.Rules{Deny: []string{"gh_delete_repo"}}})
	text, e := h.call("agent_tools_gh_call", map[string]any{"toolName": "delete_repo", "arguments": map[string]any{"owner": "a", "repo": "b"}})
	if e == nil || e["code"] != "UNKNOWN_TOOL" || strings.Contains(text, "gh_delete_repo") {
		t.Fatalf("got %s", text)
	}
}

// A provider waiting for a person's login reaches the model as
// PROVIDER_NEEDS_LOGIN with the login command, in every mode, not as
// PROVIDER_UNAVAILABLE "retried on the next call".
func TestNeedsLoginKeepsItsCode(t *testing.T) {
	for _, mode := range []facade.Mode{facade.Progressive, facade.Search, facade.Flat} {
		t.Run(string(mode), func(t *testing.T) {
			up := providertest.New(catalog.ProviderInfo{ID: "ev", Kind: "mcp"})
			up.SetError(toolerr.New(toolerr.ProviderNeedsLogin, "Run `agent-tools auth login ev`, then retry.", "provider %q needs a login", "ev"))
			h := newHarness(t, setup{mode: mode, extra: []provider.Provider{up}})
			var e map[string]any
			switch mode {
			case facade.Progressive:
				_, e = h.call("agent_tools_ev_call", map[string]any{"toolName": "echo", "arguments": map[string]any{}})
			case facade.Search:
				_, e = h.call("agent_tools_call", map[string]any{"tool": "ev_echo", "arguments": map[string]any{}})
			default:
				_, e = h.call("ev_echo", map[string]any{})
			}
			if e["code"] != "PROVIDER_NEEDS_LOGIN" || !strings.Contains(fmt.Sprint(e["hint"]), "auth login ev") {
				t.Fatalf("needs-login provider answered %v", e)
			}
		})
	}
}
