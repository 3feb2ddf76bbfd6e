package transport

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPCall: one tools/call of the echo tool on /mcp, from a
// session client (2025-11-25) and from a per-request one (2026-07-28): the
// transport's and the SDK's per-call cost of each path, without the
// runtime's pipeline (bench/overhead measures the whole runtime).
func BenchmarkHTTPCall(b *testing.B) {
	h, err := NewHTTP(HTTPOptions{Server: testMCPServer(nil), RatePerSecond: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, v := range []string{"2025-11-25", PerRequestVersion} {
		b.Run(v, func(b *testing.B) {
			ctx := context.Background()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
				Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + MCPPath, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				b.Fatal(err)
			}
			p := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
