package redact

import (
	"context"
	"errors"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strings"
	"testing"
)

func TestMiddlewareScrubsResultsErrorsAndNotifications(t *testing.T) {
	s := New()
	s.Add("TOKEN", "mcp-canary-7Kx2")
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	type in struct{ How string }
	sdk.AddTool(srv, &sdk.Tool{Name: "leak"}, func(ctx context.Context, req *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		if a.How == "err" {
			return nil, nil, errors.New("failed with mcp-canary-7Kx2")
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "token mcp-canary-7Kx2"}}}, nil, nil
	})
	srv.AddReceivingMiddleware(s.Middleware())
	srv.AddSendingMiddleware(s.SendingMiddleware())
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, how := range []string{"ok", "err"} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "leak", Arguments: map[string]any{"How": how}})
		if err != nil {
			t.Fatal(err)
		}
		txt := res.Content[0].(*sdk.TextContent).Text
		if strings.Contains(txt, "mcp-canary") || !strings.Contains(txt, "[redacted: TOKEN]") {
			t.Errorf("%s: %q", how, txt)
		}
	}

	// What the server sends on its own (a log notification) is scrubbed too.
	var got any
	next := func(_ context.Context, _ string, req sdk.Request) (sdk.Result, error) {
		got = req.GetParams().(*sdk.LoggingMessageParams).Data
		return nil, nil
	}
	req := &sdk.ServerRequest[*sdk.LoggingMessageParams]{Params: &sdk.LoggingMessageParams{Level: "info", Data: "log mcp-canary-7Kx2"}}
	if _, err := s.SendingMiddleware()(next)(ctx, "notifications/message", req); err != nil || got != "log [redacted: TOKEN]" {
		t.Errorf("notification data %q, %v", got, err)
	}
}
