package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as the fake upstreams: with FAULTS_UPSTREAM set,
// TestMain runs one of these on stdio instead of the tests.

// recordPID appends pid to $FAULTS_DIR/pids, so the suite can check that
// nothing survives the runtime.
func recordPID(pid int) {
	if dir := os.Getenv("FAULTS_DIR"); dir != "" {
		f, err := os.OpenFile(filepath.Join(dir, "pids"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, pid)
			f.Close()
		}
	}
}

func runUpstream(mode string) {
	recordPID(os.Getpid())
	switch mode {
	case "sdk":
		_ = sdkUpstream().Run(context.Background(), &sdk.StdioTransport{})
	case "raw":
		rawUpstream()
	case "exit": // exits at start, printing its secrets as a crashing server might
		fmt.Fprintf(os.Stderr, "fatal: bad config: API_KEY=%s argv=%q\n", os.Getenv("API_KEY"), os.Args)
		os.Exit(1)
	case "content": // gate_requests_test.go: resources, templates, prompts, completions
		_ = contentUpstream().Run(context.Background(), &sdk.StdioTransport{})
	case "hostile": // hostile_test.go
		err := hostileUpstream().Run(context.Background(), &sdk.StdioTransport{})
		if f, ferr := os.OpenFile(filepath.Join(os.Getenv("FAULTS_DIR"), "hostile-log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); ferr == nil {
			fmt.Fprintln(f, os.Getpid(), "ended:", err)
			f.Close()
		}
	case "silent": // reads, never answers initialize
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown upstream mode", mode)
		os.Exit(2)
	}
}

// empty is every sdk fault tool's input: nothing, but for the attempt
// number eventuallyOK varies between tries.
type empty struct {
	Attempt int `json:"attempt,omitempty"`
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func sdkUpstream() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "faults-sdk", Version: "1"}, nil)
	add := func(name string, h func() (*sdk.CallToolResult, error)) {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: "fault " + name},
			func(context.Context, *sdk.CallToolRequest, empty) (*sdk.CallToolResult, any, error) {
				res, err := h()
				return res, nil, err
			})
	}
	add("echo", func() (*sdk.CallToolResult, error) { return text("echo-ok"), nil })
	add("crash", func() (*sdk.CallToolResult, error) { // dies mid-call, printing its secrets
		fmt.Fprintf(os.Stderr, "panic: environment API_KEY=%s argv=%q\n", os.Getenv("API_KEY"), os.Args)
		os.Exit(3)
		return nil, nil
	})
	add("hang", func() (*sdk.CallToolResult, error) { select {} }) // one call never returns; pings still answered
	add("secrets", func() (*sdk.CallToolResult, error) {
		return text("env API_KEY=" + os.Getenv("API_KEY") + " argv " + strings.Join(os.Args[1:], " ")), nil
	})
	add("flood", func() (*sdk.CallToolResult, error) { return text(strings.Repeat("f", 50<<20)), nil })
	add("spawn", func() (*sdk.CallToolResult, error) { // leaves a background child behind
		cmd := exec.Command("sleep", "1000")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		recordPID(cmd.Process.Pid)
		return text(fmt.Sprint(cmd.Process.Pid)), nil
	})
	add("spawnsetsid", func() (*sdk.CallToolResult, error) { // a child that leaves the process group
		cmd := exec.Command("setsid", "sleep", "1000")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		recordPID(cmd.Process.Pid)
		return text(fmt.Sprint(cmd.Process.Pid)), nil
	})
	return s
}

// rawUpstream speaks JSON-RPC by hand to misbehave in ways the SDK would not.
func rawUpstream() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	write := func(s string) {
		// A bufio.Writer keeps its first error and returns it from Flush,
		// which a misbehaving upstream ignores as it always did.
		_, _ = out.WriteString(s)
		_, _ = out.WriteString("\n")
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
			continue
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"faults-raw","version":"1"}}`)
		case "ping":
			reply(m.ID, `{}`)
		case "tools/list":
			var tools []string
			for _, n := range []string{"echo", "junk", "malformed", "wrongid", "bigline", "stopread"} {
				tools = append(tools, `{"name":"`+n+`","inputSchema":{"type":"object"}}`)
			}
			reply(m.ID, `{"tools":[`+strings.Join(tools, ",")+`]}`)
		case "tools/call":
			ok := `{"content":[{"type":"text","text":"raw-ok"}]}`
			switch m.Params.Name {
			case "junk": // a log line on stdout, then the answer
				write("Server listening on port 3000 \x00\xff not json")
				reply(m.ID, ok)
			case "malformed":
				write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"cut`)
			case "wrongid":
				write(`{"jsonrpc":"2.0","id":987654,"result":` + ok + `}`)
			case "bigline": // 20 MB in one line, over the 16 MiB message limit
				write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("b", 20<<20) + `"}]}}`)
			case "stopread": // stops reading its input for good; the process stays alive
				select {}
			default:
				reply(m.ID, ok)
			}
		default:
			write(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"method not found"}}`)
		}
	}
}

// headerEcho is an HTTP upstream whose tool refuses the call and quotes the
// Authorization header it got, as a careless server's error would.
func headerEcho() http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "faults-http", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "echo the credentials"},
		func(_ context.Context, req *sdk.CallToolRequest, _ empty) (*sdk.CallToolResult, any, error) {
			h := ""
			if req.Extra != nil && req.Extra.Header != nil {
				h = req.Extra.Header.Get("Authorization")
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "forbidden for Authorization: " + h}}}, nil, nil
		})
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: true})
}
