package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: one stray line on stdin used to end the
// session (serve exited 1). Now it gets a JSON-RPC error and the session
// lives on.
func TestStdioStrayLinesKeepTheSession(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping_me"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{}, nil, nil
	})
	in := strings.Join([]string{
		`hello, is this thing on?`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		``,
		`{"foo": 1, "id": 7}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Run(ctx, Stdio(strings.NewReader(in), &out, 5*time.Second))
	if err != nil && err != io.EOF && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("Run: %v", err)
	}
	var got []map[string]any
	raw := out.String()
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("output line is not JSON: %q", sc.Text())
		}
		got = append(got, m)
	}
	if len(got) != 4 {
		t.Fatalf("want 4 answers (parse error, initialize, invalid request, tools/list), got %d: %s", len(got), raw)
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	byID := map[any]map[string]any{}
	for _, m := range got { // answers to different lines may interleave
		byID[m["id"]] = m
	}
	if m := byID[nil]; code(m) != -32700 || !strings.Contains(raw, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`) {
		t.Errorf("stray text (JSON-RPC 2.0 wants \"id\":null): %v", m)
	}
	if m := byID[float64(1)]; m["result"] == nil {
		t.Errorf("initialize: %v", m)
	}
	if m := byID[float64(7)]; code(m) != -32600 {
		t.Errorf("JSON that is not a message: %v", m)
	}
	if m := byID[float64(2)]; m["result"] == nil || !strings.Contains(raw, "ping_me") {
		t.Errorf("tools/list after the stray lines: %v", m)
	}
}

// The error answering a line that is not a message has the line's id if it
// has a valid one, whatever its other members, else "id":null.
func TestScreenIDs(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{"garbage", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not valid JSON"}}`},
		{`{"jsonrpc":"2.0","id":3,"method":5}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: the line is JSON but not a JSON-RPC 2.0 message"}}`},
		{`{"id":"a","method":"ping"}`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"invalid request: the line is JSON but not a JSON-RPC 2.0 message"}}`},
		{`{"id":{"x":1},"method":"m"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the line is JSON but not a JSON-RPC 2.0 message"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: an empty batch"}}`},
		{strings.Repeat("[", 1001) + strings.Repeat("]", 1001), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the line is JSON but not a JSON-RPC 2.0 message"}}`},
	} {
		var out strings.Builder
		if screen([]byte(tt.line), &out) || out.String() != tt.want+"\n" {
			t.Errorf("%.40q: answered %q, want %q", tt.line, out.String(), tt.want)
		}
	}
}

// FuzzScreen: any line is either handed to the SDK (a JSON-RPC message or
// a batch) or answered with exactly one JSON-RPC error line; never both,
// never a panic.
func FuzzScreen(f *testing.F) {
	for _, s := range []string{"", "   ", "garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"id":3}`, `[1,2]`, `{"jsonrpc":"2.0","id":{"x":1},"method":"m"}`, "\xff", "[]", " [ ]\r\n", `{"id":3,"method":5}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) > 4096 {
			t.Skip("bounded inputs")
		}
		var out strings.Builder
		pass := screen(line, &out)
		if pass && out.Len() > 0 {
			t.Fatalf("%q both passed and answered: %s", line, out.String())
		}
		if pass || len(strings.TrimSpace(string(line))) == 0 {
			return
		}
		reply := out.String()
		var m map[string]any
		if strings.Count(reply, "\n") != 1 || json.Unmarshal([]byte(reply), &m) != nil || m["error"] == nil {
			t.Fatalf("%q answered with %q", line, reply)
		}
		if _, ok := m["id"]; !ok { // null when the line has none
			t.Fatalf("%q answered without an id: %q", line, reply)
		}
	})
}

func BenchmarkScreen(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"ev_echo","arguments":{"text":"` + strings.Repeat("x", 64) + `"},"_meta":{"progressToken":"t"}}}` + "\n")
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(bytes.TrimSpace(line)); err != nil || !json.Valid(line) {
				b.Fatal(err)
			}
		}
	})
	b.Run("screen", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !screen(line, io.Discard) {
				b.Fatal("refused")
			}
		}
	})
}
