package passthrough_test

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// ptCanary is a configured secret an upstream quotes in a resource and a
// prompt.
const ptCanary = "pt-canary-5be0d7a4"

func init() { redact.Add("PT_KEY", ptCanary) }

// TestPassthroughRequestsTakeThePipeline: resource reads, prompt fetches,
// completions, subscriptions and log-level changes are audited, allowed or denied by their canonical name (a resource's URI,
// a prompt's published name), and their answers scrubbed of secrets.
func TestPassthroughRequestsTakeThePipeline(t *testing.T) {
	audit := &testutil.SyncBuffer{}
	rules := policy.Rules{Deny: []string{"test://t/*", "pre_greet"}}
	h := newPTHarnessWith(t, false, rules, audit)
	h.up.server.AddResource(&sdk.Resource{Name: "secret", URI: "test://secret", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "key=" + ptCanary}}}, nil
	})
	c := h.connect("a")
	ctx := context.Background()

	// Allowed: answered, audited, scrubbed.
	got, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://secret"})
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Contents[0].Text; strings.Contains(text, ptCanary) || !strings.HasPrefix(text, "key=") {
		t.Errorf("resource not scrubbed: %q", text)
	}
	pr, err := c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": ptCanary}})
	if err != nil {
		t.Fatal(err)
	}
	if text := pr.Messages[0].Content.(*sdk.TextContent).Text; strings.Contains(text, ptCanary) || !strings.HasPrefix(text, "hello ") {
		t.Errorf("prompt not scrubbed: %q", text)
	}
	if _, err := c.cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "greet"},
		Argument: sdk.CompleteParamsArgument{Name: "who", Value: "A"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://a"}); err != nil {
		t.Fatal(err)
	}
	if err := c.cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}

	// Denied: hidden from the lists, and answered as if it did not exist.
	_, err = c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://t/42"})
	if err == nil || !strings.Contains(err.Error(), `UNKNOWN_TOOL: no resource named "test://t/42"`) {
		t.Errorf("denied resource: %v", err)
	}
	_, err = c.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "pre_greet", Arguments: map[string]string{"who": "x"}})
	if err == nil || !strings.Contains(err.Error(), `UNKNOWN_TOOL: no prompt named "pre_greet"`) {
		t.Errorf("denied prompt: %v", err)
	}
	if err := c.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://t/1"}); err == nil || !strings.Contains(err.Error(), "UNKNOWN_TOOL") {
		t.Errorf("denied subscription: %v", err)
	}
	prompts, err := c.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts.Prompts {
		if p.Name == "pre_greet" {
			t.Error("a denied prompt is listed")
		}
	}
	tpl, err := c.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tpl.ResourceTemplates) != 0 {
		t.Errorf("a denied template is listed: %+v, %v", tpl, err)
	}

	// The audit has one record per request, under its canonical name.
	type rec struct {
		Tool, Via, Decision, Outcome, Client string
		ErrorCode                            string `json:"error_code"`
	}
	var recs []rec
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var r rec
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	want := []rec{
		{Tool: "test://secret", Via: "resources/read", Decision: "allowed", Outcome: "ok"},
		{Tool: "greet", Via: "prompts/get", Decision: "allowed", Outcome: "ok"},
		{Tool: "greet", Via: "completion/complete", Decision: "allowed", Outcome: "ok"},
		{Tool: "test://a", Via: "resources/subscribe", Decision: "allowed", Outcome: "ok"},
		{Tool: "logging/setLevel", Via: "logging/setLevel", Decision: "allowed", Outcome: "ok"},
		{Tool: "test://t/42", Via: "resources/read", Decision: "denied", Outcome: "error", ErrorCode: "UNKNOWN_TOOL"},
		{Tool: "pre_greet", Via: "prompts/get", Decision: "denied", Outcome: "error", ErrorCode: "UNKNOWN_TOOL"},
		{Tool: "test://t/1", Via: "resources/subscribe", Decision: "denied", Outcome: "error", ErrorCode: "UNKNOWN_TOOL"},
	}
	for i := range recs {
		if recs[i].Client != "a" {
			t.Errorf("record %d lacks the client: %+v", i, recs[i])
		}
		recs[i].Client = ""
	}
	if !slices.Equal(recs, want) {
		t.Errorf("audit:\n got %+v\nwant %+v", recs, want)
	}
	if strings.Contains(audit.String(), ptCanary) {
		t.Error("the audit holds the secret")
	}
}

// TestPassthroughMalformedRequestsStillAnswer: a request that names
// nothing is audited under its method and answered as before.
func TestPassthroughMalformedRequestsStillAnswer(t *testing.T) {
	audit := &testutil.SyncBuffer{}
	h := newPTHarnessWith(t, false, policy.Rules{}, audit)
	c := h.connect("a")
	_, err := c.cs.Complete(context.Background(), &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: ""},
		Argument: sdk.CompleteParamsArgument{Name: "x", Value: "y"}})
	if err == nil || !strings.Contains(err.Error(), "unknown prompt") {
		t.Errorf("completing a prompt without a name: %v", err)
	}
	if !strings.Contains(audit.String(), `"tool":"completion/complete"`) {
		t.Errorf("audit = %s", audit.String())
	}
}
