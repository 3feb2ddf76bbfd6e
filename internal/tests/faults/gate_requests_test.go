package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// contentUpstream serves a tool, a resource, a template, a prompt and
// completions: everything a forwarded request can ask for.
func contentUpstream() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "faults-content", Version: "1"}, &sdk.ServerOptions{
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{"completed-" + req.Params.Argument.Value}}}, nil
		},
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	sdk.AddTool(s, &sdk.Tool{Name: "readit", Description: "Read the public note."}, func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
		return text("public note"), nil, nil
	})
	s.AddResource(&sdk.Resource{Name: "private", URI: "file:///private/notes", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "private-content-7f3a"}}}, nil
	})
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "rows", URITemplate: "db://rows/{id}"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "row-content-7f3a"}}}, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "leak", Description: "A private prompt.", Arguments: []*sdk.PromptArgument{{Name: "who"}}},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "prompt-content-7f3a"}}}}, nil
		})
	return s
}

// TestForwardedRequestsObeyAllowLists (#44 items 1 and 2) against the real
// `serve --http`, flat mode, a `prefix: ""` stdio upstream: a token whose
// rule is `allow: [readit]`, and a profile with `tools.allow: [readit]`,
// get readit and nothing else — no resource, template, prompt or
// completion is listed or served, in a 2025-11-25 session and a 2026-07-28
// per-request client alike — and a misspelt or bare name of a hidden tool
// is never suggested. An unrestricted token gets all of it (the control).
func TestForwardedRequestsObeyAllowLists(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh for the local script")
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "envdump"), []byte("#!/bin/sh\n# @description Print the environment.\n# @readonly\nenv\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &project{dir: dir, config: filepath.Join(dir, "agent-tools.yaml"), audit: filepath.Join(dir, "audit.jsonl")}
	const alice, admin = "faults-req-alice-token-0123456789", "faults-req-admin-token-0123456789"
	t.Setenv("FAULTS_REQ_ALICE", alice)
	t.Setenv("FAULTS_REQ_ADMIN", admin)
	cfg := fmt.Sprintf(`mode: flat
local:
  requireConfirm: false
providers:
  - id: up
    kind: mcp
    prefix: ""
    command: %q
    env: {FAULTS_UPSTREAM: content, FAULTS_DIR: %q}
    requireConfirm: false
server:
  http:
    tokens:
      - {name: alice, token: "${FAULTS_REQ_ALICE}"}
      - {name: admin, token: "${FAULTS_REQ_ADMIN}"}
    rateLimit: {off: true}
policy:
  rules:
    - identities: ["token:alice"]
      allow: ["readit"]
profiles:
  ro:
    tools: {allow: ["readit"]}
audit:
  path: %q
`, exe, dir, p.audit)
	if err := os.WriteFile(p.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url, stderr, stop := serveHTTP(t, p)
	defer stop()
	connect := func(endpoint, token, version string) *sdk.ClientSession {
		t.Helper()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "gate-requests", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect %s: %v\n%s", endpoint, err, stderr.String())
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// what reports everything the caller reached.
	what := func(cs *sdk.ClientSession) []string {
		var got []string
		if res, err := cs.ListResources(ctx, nil); err == nil {
			for _, r := range res.Resources {
				got = append(got, "list:"+r.URI)
			}
		}
		if res, err := cs.ListResourceTemplates(ctx, nil); err == nil {
			for _, r := range res.ResourceTemplates {
				got = append(got, "templates:"+r.URITemplate)
			}
		}
		for _, uri := range []string{"file:///private/notes", "db://rows/1"} {
			if res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil && len(res.Contents) > 0 {
				got = append(got, "read:"+res.Contents[0].Text)
			} else if err != nil && strings.Contains(err.Error(), "7f3a") {
				t.Errorf("a refused read quotes the content: %v", err)
			}
		}
		if res, err := cs.ListPrompts(ctx, nil); err == nil {
			for _, p := range res.Prompts {
				got = append(got, "prompts:"+p.Name)
			}
		}
		if res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "leak"}); err == nil && len(res.Messages) > 0 {
			got = append(got, "get:"+res.Messages[0].Content.(*sdk.TextContent).Text)
		}
		if res, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "leak"}, Argument: sdk.CompleteParamsArgument{Name: "who", Value: "x"}}); err == nil {
			got = append(got, "complete:"+strings.Join(res.Completion.Values, ","))
		}
		for _, name := range []string{"envdmp", "envdump", "local_envdump"} {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("call %s: %v", name, err)
			}
			if !res.IsError {
				got = append(got, "ran:"+name)
				continue
			}
			var env struct {
				Error struct {
					DidYouMean   any `json:"did_you_mean"`
					CorrectShape any `json:"correct_shape"`
				} `json:"error"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(b, &env)
			taught, _ := json.Marshal(env.Error)
			if strings.Contains(string(taught), "envdump") {
				got = append(got, "taught:"+name)
			}
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "readit", Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			got = append(got, "readit")
		}
		return got
	}
	base := strings.TrimSuffix(url, "/mcp")
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		all := what(connect(url, admin, v))
		for _, want := range []string{"read:private-content-7f3a", "read:row-content-7f3a", "prompts:leak", "get:prompt-content-7f3a", "complete:completed-x", "taught:envdmp", "readit"} {
			if !slices.Contains(all, want) {
				t.Errorf("%s: the unrestricted token does not reach %s (got %v)", v, want, all)
			}
		}
		for _, who := range []struct{ name, endpoint, token string }{
			{"alice (allow: [readit])", url, alice},
			{"profile ro (tools.allow: [readit])", base + "/mcp/p/ro", admin},
		} {
			got := what(connect(who.endpoint, who.token, v))
			if !slices.Equal(got, []string{"readit"}) {
				t.Errorf("%s, %s reached %v, want only [readit]", v, who.name, got)
			}
		}
	}
	record("gate: forwarded requests and teachings under allow lists (resources, templates, prompts, completions, suggestions; both protocol generations)", 1, "default-closed")
}
