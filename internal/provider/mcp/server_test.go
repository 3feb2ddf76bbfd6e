package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as the upstream: with MCPTEST_SERVER set, TestMain
// runs one of these servers on stdio instead of the tests.

func runTestServer(mode string) {
	dir := os.Getenv("MCPTEST_DIR")
	if dir != "" {
		f, err := os.OpenFile(filepath.Join(dir, "starts"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	switch mode {
	case "sdk":
		server := newTestServer(dir)
		_ = server.Run(context.Background(), &sdk.StdioTransport{})
	case "exit":
		fmt.Fprintln(os.Stderr, "boom: missing configuration")
		os.Exit(1)
	case "silent":
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
	case "raw":
		rawServer()
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
}

type textArg struct {
	Text string `json:"text,omitempty"`
}
type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}
type sum struct {
	Sum int `json:"sum"`
}
type msArg struct {
	MS int `json:"ms"`
}
type nArg struct {
	N int `json:"n"`
}
type nameArg struct {
	Name string `json:"name"`
}
type empty struct{}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func newTestServer(dir string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "1"}, &sdk.ServerOptions{Instructions: "Test server instructions."})
	s.AddPrompt(&sdk.Prompt{Name: "hello", Description: "Say hello."}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}}}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "addprompt", Description: "Add a prompt named extra."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			s.AddPrompt(&sdk.Prompt{Name: "extra", Description: "Added later."}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				return &sdk.GetPromptResult{}, nil
			})
			return textResult("added"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "logs", Description: "Log n messages, then answer at once."},
		func(ctx context.Context, req *sdk.CallToolRequest, a nArg) (*sdk.CallToolResult, any, error) {
			for i := range a.N {
				if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Data: fmt.Sprint(i)}); err != nil {
					return nil, nil, err
				}
			}
			return textResult("logged"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Ask the client for a sampling; report it, the progress token and our pid."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 5, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "?"}}}})
			if err != nil {
				return nil, nil, err
			}
			return textResult(fmt.Sprintf("%s token=%v pid=%d", res.Content.(*sdk.TextContent).Text, req.Params.GetProgressToken(), os.Getpid())), nil, nil
		})
	yes := true
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a textArg) (*sdk.CallToolResult, any, error) {
			return textResult(a.Text), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Add two integers."},
		func(_ context.Context, _ *sdk.CallToolRequest, a addArgs) (*sdk.CallToolResult, sum, error) {
			return nil, sum{a.A + a.B}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "delete", Description: "Delete everything.", Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return textResult("deleted"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Sleep ms milliseconds."},
		func(ctx context.Context, _ *sdk.CallToolRequest, a msArg) (*sdk.CallToolResult, any, error) {
			if err := os.WriteFile(filepath.Join(dir, "slow-started"), []byte("yes"), 0o600); err != nil { // the call is in flight
				return nil, nil, err
			}
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
				return textResult("slept"), nil, nil
			case <-ctx.Done():
				if err := os.WriteFile(filepath.Join(dir, "cancelled"), []byte("yes"), 0o600); err != nil {
					return nil, nil, err
				}
				return nil, nil, ctx.Err()
			}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "flood", Description: "Return n bytes of text."},
		func(_ context.Context, _ *sdk.CallToolRequest, a nArg) (*sdk.CallToolResult, any, error) {
			return textResult(strings.Repeat("x", a.N)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exit at once."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Read an environment variable."},
		func(_ context.Context, _ *sdk.CallToolRequest, a nameArg) (*sdk.CallToolResult, any, error) {
			v, ok := os.LookupEnv(a.Name)
			if !ok {
				v = "<unset>"
			}
			return textResult(v), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Return a tiny image."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a red dot"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG fake image")},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fail as a tool."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such file"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "pids", Description: "Spawn a grandchild; return its pid and ours."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			return textResult(fmt.Sprintf("%d %d", os.Getpid(), cmd.Process.Pid)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "addtool", Description: "Add a tool named extra."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: "extra", Description: "Added later."},
				func(_ context.Context, _ *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
					return textResult("extra!"), nil, nil
				})
			return textResult("added"), nil, nil
		})
	return s
}

// rawServer speaks JSON-RPC by hand to misbehave in ways the SDK would not.
func rawServer() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	write := func(s string) {
		// A bufio.Writer keeps its first error for Flush; a client that
		// stopped reading has nothing to be told, so the error is dropped.
		_, _ = out.WriteString(s + "\n")
		out.Flush()
	}
	reply := func(id json.RawMessage, result string) {
		write(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue // notifications
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			obj := `"inputSchema":{"type":"object"}`
			reply(m.ID, `{"tools":[`+
				`{"name":"echo","description":"first",`+obj+`},`+
				`{"name":"echo","description":"second",`+obj+`},`+
				`{"name":"badschema","inputSchema":"yes"},`+
				`{"name":"arrayschema","inputSchema":{"type":"array"}},`+
				`{"name":"noschema"},`+
				`{"name":"big",`+obj+`},{"name":"tsbig",`+obj+`},{"name":"garbage",`+obj+`},`+
				`{"name":"malformed",`+obj+`},{"name":"notrpc",`+obj+`},{"name":"hang",`+obj+`}]}`)
		case "tools/call":
			result := `{"content":[{"type":"text","text":"ok ` + m.Params.Name + `"}]}`
			switch m.Params.Name {
			case "big": // 50 MB in one message, id first (Go, Python)
				write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 50<<20) + `"}]}}`)
				continue
			case "tsbig": // 50 MB, id last (TypeScript)
				write(`{"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", 50<<20) + `"}]},"jsonrpc":"2.0","id":` + string(m.ID) + `}`)
				continue
			case "garbage":
				write("Server listening on port 3000 (a log line on stdout)")
			case "notrpc":
				write(`{"hello":"world"}`)
			case "notes": // notifications the SDK never hands to a handler, then one it does, then the answer
				write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`) // preempted
				write(`{"jsonrpc":"2.0","method":"notifications/agent-tools-test/unknown","params":{}}`)
				write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":7}}`) // params it cannot decode
				write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"kept"}}`)
			case "hang": // the read loop blocks for good; the process stays alive
				select {}
			case "malformed":
				write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"cut`)
				continue
			}
			reply(m.ID, result)
		default:
			write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"method not found"}}`)
		}
	}
}
