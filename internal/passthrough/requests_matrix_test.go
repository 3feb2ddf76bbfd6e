package passthrough_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/passthrough"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
)

// The gate's third axis: every request type that reaches a provider or
// names something a provider has, against every restriction, over both
// protocol generations (a 2025-11-25 session, a 2026-07-28 per-request
// client). The facade's TestGateMatrix crosses the tool-call doors with the
// restrictions; this one crosses the request types (#44 item 1: forwarded
// requests were default-open under an allow list; item 2: a suggestion or
// a correct_shape named a hidden tool).
//
// The upstream "up" is forwarded in full with bare names (prefix "", flat
// mode); every restriction leaves the caller the one tool "echo", so its
// tool "meta", its resource test://a, its template test://t/{id}, its
// prompt greet and the prefixed provider's pre_greet must each answer as if
// they did not exist: not listed, not read, not completed, not subscribed,
// not suggested, and the upstream never asked.

// requestType is one JSON-RPC request (or one teaching) a caller can send.
type requestType struct {
	method string
	// sessions: needs the stateful protocol (subscriptions, logging).
	sessions bool
	// reach sends the request and reports whether the caller got the
	// target: listed it, read it, completed it, was taught its name.
	reach func(t *testing.T, h *ptHarness, c *client) bool
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// hiddenAnswer checks that a refused request answers as for a name that
// does not exist, naming nothing it should not.
func hiddenAnswer(t *testing.T, what string, err error) {
	t.Helper()
	msg := errText(err)
	if err == nil {
		return
	}
	if strings.Contains(msg, "content of a") || strings.Contains(msg, "hello") || strings.Contains(msg, "Greets") {
		t.Errorf("%s: the refusal quotes the target: %s", what, msg)
	}
}

var requestTypes = []requestType{
	{method: "tools/list", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Tools, func(x *sdk.Tool) bool { return x.Name == "meta" })
	}},
	{method: "tools/call", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "meta", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return !res.IsError
	}},
	{method: "tools/call: did_you_mean", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "mta", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		return strings.Contains(string(b), `"meta"`) || strings.Contains(textOf(res), `"meta"`)
	}},
	{method: "tools/call: correct_shape", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "up_meta", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		return strings.Contains(string(b), `"meta"`) || strings.Contains(textOf(res), `"meta"`)
	}},
	{method: "resources/list", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.ListResources(context.Background(), nil)
		if err != nil {
			return false // not offered at all
		}
		return slices.ContainsFunc(res.Resources, func(r *sdk.Resource) bool { return r.URI == "test://a" })
	}},
	{method: "resources/templates/list", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.ListResourceTemplates(context.Background(), nil)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(res.ResourceTemplates, func(r *sdk.ResourceTemplate) bool { return r.URITemplate == "test://t/{id}" })
	}},
	{method: "resources/read", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "test://a"})
		hiddenAnswer(t, "resources/read", err)
		return err == nil && len(res.Contents) > 0 && res.Contents[0].Text == "content of a"
	}},
	{method: "resources/read (template)", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "test://t/42"})
		hiddenAnswer(t, "resources/read", err)
		return err == nil && len(res.Contents) > 0 && res.Contents[0].Text == "template 42"
	}},
	{method: "resources/subscribe", sessions: true, reach: func(t *testing.T, h *ptHarness, c *client) bool {
		err := c.cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: "test://a"})
		hiddenAnswer(t, "resources/subscribe", err)
		h.up.mu.Lock()
		defer h.up.mu.Unlock()
		if err != nil && slices.Contains(h.up.subscribed, "test://a") {
			t.Error("a refused subscription reached the upstream")
		}
		return err == nil
	}},
	{method: "prompts/list", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.ListPrompts(context.Background(), nil)
		if err != nil {
			return false
		}
		return slices.ContainsFunc(res.Prompts, func(p *sdk.Prompt) bool { return p.Name == "greet" || p.Name == "pre_greet" })
	}},
	{method: "prompts/get", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		got := false
		for _, name := range []string{"greet", "pre_greet"} {
			res, err := c.cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: name, Arguments: map[string]string{"who": "x"}})
			hiddenAnswer(t, "prompts/get "+name, err)
			got = got || err == nil && len(res.Messages) > 0
		}
		return got
	}},
	{method: "completion/complete (prompt)", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.Complete(context.Background(), &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "greet"},
			Argument: sdk.CompleteParamsArgument{Name: "who", Value: "A"}})
		hiddenAnswer(t, "completion/complete", err)
		return err == nil && slices.Contains(res.Completion.Values, "greet:A-done")
	}},
	{method: "completion/complete (resource)", reach: func(t *testing.T, h *ptHarness, c *client) bool {
		res, err := c.cs.Complete(context.Background(), &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "test://t/{id}"},
			Argument: sdk.CompleteParamsArgument{Name: "id", Value: "4"}})
		hiddenAnswer(t, "completion/complete", err)
		return err == nil && len(res.Completion.Values) > 0
	}},
}

// requestRestriction leaves the caller only what it names.
type requestRestriction struct {
	name    string
	rules   policy.Rules
	access  *policy.Access
	profile string
}

var targets = []string{"meta", "test://*", "test://t/*", "greet", "pre_greet"} // path.Match: * stops at a slash

var requestRestrictions = []requestRestriction{
	{name: "policy allow", rules: policy.Rules{Allow: []string{"echo"}}},
	{name: "policy deny", rules: policy.Rules{Deny: targets}},
	{name: "identity allow", access: policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{"process:*"}, Rules: policy.Rules{Allow: []string{"echo"}}}})},
	{name: "identity deny", access: policy.NewAccess(nil, []policy.IdentityRule{{Identities: []string{"process:*"}, Rules: policy.Rules{Deny: targets}}})},
	{name: "profile tools allow", access: policy.NewAccess(map[string]policy.View{"p": {Tools: policy.Rules{Allow: []string{"echo"}}}}, nil), profile: "p"},
	{name: "profile tools deny", access: policy.NewAccess(map[string]policy.View{"p": {Tools: policy.Rules{Deny: targets}}}, nil), profile: "p"},
	{name: "profile providers", access: policy.NewAccess(map[string]policy.View{"p": {Providers: []string{"other"}}}, nil), profile: "p"},
}

// newPTHarnessAccess is newPTHarness with the gate's inputs: global rules,
// profiles and identity rules, and the profile the facade serves.
func newPTHarnessAccess(t *testing.T, r requestRestriction) *ptHarness {
	t.Helper()
	u := newUpstream()
	prov := newUpProvider(t, catalog.ProviderInfo{ID: "up", Kind: "mcp", Description: "Upstream", HostLocal: true}, u)
	pre := newUpProvider(t, catalog.ProviderInfo{ID: "pre", Kind: "mcp", Description: "Prefixed upstream"}, newUpstream())
	reg := registry.New(nil)
	for _, p := range []provider.Provider{prov, pre} {
		if err := reg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Rules: r.rules, Access: r.access, Guard: policy.NewLoopGuard(), Execute: pipeline.ExecuteOptions{DefaultTimeout: 5 * time.Second}})
	fo := facade.Options{Mode: facade.Flat, Version: "test", Rules: r.rules, Profile: r.profile}
	if r.access != nil {
		fo.Access = func() *policy.Access { return r.access }
		fo.View = r.access.View(r.profile)
	}
	fac := facade.New(reg, run, fo)
	reg.OnChange(fac.Sync)
	reg.Refresh(context.Background())
	fac.Sync()
	return &ptHarness{t: t, up: u, prov: prov, pre: pre, fac: fac}
}

func TestGateMatrixRequestTypes(t *testing.T) {
	protocols := []string{"2025-11-25", "2026-07-28"}
	// The control row: unrestricted, every request type reaches its
	// target, so a refusal below is the restriction's.
	for _, v := range protocols {
		for _, rt := range requestTypes {
			if rt.sessions && v == "2026-07-28" {
				continue
			}
			t.Run("no restriction/"+v+"/"+rt.method, func(t *testing.T) {
				h := newPTHarnessAccess(t, requestRestriction{})
				if !rt.reach(t, h, h.connect("a", v)) {
					t.Fatal("unrestricted, the request does not reach its target")
				}
			})
		}
	}
	cells := 0
	for _, r := range requestRestrictions {
		for _, v := range protocols {
			for _, rt := range requestTypes {
				if rt.sessions && v == "2026-07-28" {
					continue // the per-request protocol has no subscriptions
				}
				cells++
				t.Run(fmt.Sprintf("%s/%s/%s", r.name, v, rt.method), func(t *testing.T) {
					h := newPTHarnessAccess(t, r)
					if rt.reach(t, h, h.connect("a", v)) {
						t.Fatalf("%s reached its target under %s", rt.method, r.name)
					}
				})
			}
		}
	}
	if want := 175; cells != want {
		t.Errorf("the matrix has %d cells, want %d: update the count with the lists", cells, want)
	}
}

// TestEveryForwardedMethodHasARow: a method the passthrough forwards or
// gates is in the matrix by name, so a new one cannot go untested.
func TestEveryForwardedMethodHasARow(t *testing.T) {
	rows := map[string]bool{}
	for _, rt := range requestTypes {
		m, _, _ := strings.Cut(rt.method, " ")
		m, _, _ = strings.Cut(m, ":")
		rows[m] = true
	}
	// logging/setLevel and resources/unsubscribe concern the client's own
	// session (TestSessionOpsUnderAllowLists), notifications none.
	own := map[string]bool{"logging/setLevel": true, "resources/unsubscribe": true}
	for _, m := range passthrough.Methods {
		if !rows[m] && !own[m] {
			t.Errorf("the passthrough handles %s, which has no row in requestTypes", m)
		}
	}
}

// TestSessionOpsUnderAllowLists: logging/setLevel sets only the client's
// own session and names nothing upstream: an allow list for tools leaves
// it working (a deny list naming it still refuses it).
func TestSessionOpsUnderAllowLists(t *testing.T) {
	h := newPTHarnessAccess(t, requestRestrictions[2]) // identity allow
	c := h.connect("a")
	if err := c.cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatalf("setLevel under an allow list: %v", err)
	}
	d := newPTHarnessAccess(t, requestRestriction{name: "deny setLevel", rules: policy.Rules{Deny: []string{"logging/*"}}})
	if err := d.connect("a").cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err == nil {
		t.Fatal("setLevel under a deny list naming it succeeded")
	}
}
