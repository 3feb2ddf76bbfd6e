package redact

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMiddlewareScrubsResultsErrorsAndNotifications(t *testing.T) {
	s := New()
	s.Add("TOKEN", "mcp-canary-7Kx2")
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct{ How string }
	mcp.AddTool(srv, &mcp.Tool{Name: "leak"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		if a.How == "err" {
			return nil, nil, errors.New("failed with mcp-canary-7Kx2")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "token mcp-canary-7Kx2"}}}, nil, nil
	})
	srv.AddReceivingMiddleware(s.Middleware())
	srv.AddSendingMiddleware(s.SendingMiddleware())
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, how := range []string{"ok", "err"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "leak", Arguments: map[string]any{"How": how}})
		if err != nil {
			t.Fatal(err)
		}
		txt := res.Content[0].(*mcp.TextContent).Text
		if strings.Contains(txt, "mcp-canary") || !strings.Contains(txt, "${TOKEN}") {
			t.Errorf("%s: %q", how, txt)
		}
	}

	// What the server sends on its own (a log notification) is scrubbed too.
	var got any
	next := func(_ context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		got = req.GetParams().(*mcp.LoggingMessageParams).Data
		return nil, nil
	}
	req := &mcp.ServerRequest[*mcp.LoggingMessageParams]{Params: &mcp.LoggingMessageParams{Level: "info", Data: "log mcp-canary-7Kx2"}}
	if _, err := s.SendingMiddleware()(next)(ctx, "notifications/message", req); err != nil || got != "log ${TOKEN}" {
		t.Errorf("notification data %q, %v", got, err)
	}
}
