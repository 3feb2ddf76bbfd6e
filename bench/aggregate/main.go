// Command aggregate measures how much of an aggregating upstream's catalog
// reaches the model: a fake hub — an in-process go-sdk server
// over Streamable HTTP on 127.0.0.1 — serves every tool of the retrieval
// data sets under aggregated names ("Hacker_News_MCP_Server__getCommentTree"),
// and agent-tools loads it as one provider from a real config file. It
// reports, side by side, tools offered upstream, loaded by the registry,
// listed by progressive discover, found by search for their own name,
// published in flat mode, and callable by name as the CLI calls them.
//
//	go run ./bench/aggregate [--datasets ../shared/datasets] [--json]
//
// The program uses only the runtime's long-standing API (app, facade,
// pipeline), so the same file measures an older tree for a before/after.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/agent-tools/agent-tools/internal/policy"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

type datasetTool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Result is one run's figures.
type Result struct {
	Mode        string `json:"mode,omitempty"`
	Upstream    int    `json:"upstream"`
	Loaded      int    `json:"loaded"`
	Discover    int    `json:"discover"`
	Search      int    `json:"search_by_name"`
	FlatOffered int    `json:"flat_offered"`
	CLICallable int    `json:"cli_callable"`
	LongestName int    `json:"longest_canonical_name"`
	Unreadable  int    `json:"names_rewritten"`
}

func main() {
	datasets := flag.String("datasets", "../shared/datasets", "directory with livemcpbench/ and azure-mcp/ (see the README's data sets section)")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Parse()
	var tools []datasetTool
	for _, ds := range []string{"livemcpbench", "azure-mcp"} {
		ts, err := load(filepath.Join(*datasets, ds, "tools.jsonl"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "aggregate: cannot read data set %s: %v\n(the data sets live in ../shared/datasets beside the repository; pass --datasets DIR)\n", ds, err)
			os.Exit(2)
		}
		tools = append(tools, ts...)
	}
	res, err := measure(context.Background(), tools)
	if err != nil {
		fmt.Fprintln(os.Stderr, "aggregate:", err)
		os.Exit(1)
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		return
	}
	fmt.Printf("upstream tools offered:            %d\n", res.Upstream)
	fmt.Printf("loaded by the registry:            %d\n", res.Loaded)
	fmt.Printf("listed by progressive discover:    %d\n", res.Discover)
	fmt.Printf("found by search for their name:    %d\n", res.Search)
	fmt.Printf("published in flat mode:            %d\n", res.FlatOffered)
	fmt.Printf("resolved by canonical name (CLI):  %d\n", res.CLICallable)
	fmt.Printf("longest canonical name:            %d characters\n", res.LongestName)
	fmt.Printf("canonical names != server's name:  %d\n", res.Unreadable)
}

func load(path string) ([]datasetTool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []datasetTool
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var t datasetTool
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

// aggregated is how an aggregating hub names a server's tool: the server's
// name with anything outside A–Z a–z 0–9 _ - replaced, "__", the tool.
func aggregated(server, tool string) string {
	clean := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, server)
	return clean + "__" + tool
}

// hub is the fake aggregating upstream.
func hub(tools []datasetTool) (*httptest.Server, map[string]bool) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mcp-hub", Title: "Aggregated MCP hub", Version: "1"},
		&sdk.ServerOptions{Instructions: "Tools of 114 MCP servers behind one endpoint. Names are <server>__<tool>."})
	names := map[string]bool{}
	for _, t := range tools {
		name := aggregated(t.Server, t.Name)
		if names[name] {
			continue
		}
		names[name] = true
		var schema map[string]any
		if json.Unmarshal(t.InputSchema, &schema) != nil || schema == nil {
			schema = map[string]any{"type": "object"}
		}
		if schema["type"] == nil {
			schema["type"] = "object"
		}
		srv.AddTool(&sdk.Tool{Name: name, Description: t.Description, InputSchema: schema},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "called " + req.Params.Name}}}, nil
			})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true})
	return httptest.NewServer(h), names
}

func measure(ctx context.Context, tools []datasetTool) (Result, error) {
	up, names := hub(tools)
	defer up.Close()
	dir, err := os.MkdirTemp("", "aggregate")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	res := Result{Upstream: len(names)}

	open := func(mode string) (*app.App, *sdk.ClientSession, error) {
		cfg := fmt.Sprintf("mode: %s\nlocal: {enabled: false}\naudit: {path: \"off\"}\nproviders:\n  - id: hub\n    kind: mcp\n    url: %s\n    readonly: [\"*\"]\n", mode, up.URL)
		path := filepath.Join(dir, "agent-tools.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			return nil, nil, err
		}
		a, err := app.New(ctx, app.Options{ConfigPath: path, ProjectDir: dir})
		if err != nil {
			return nil, nil, err
		}
		a.Registry().Refresh(ctx)
		a.Facade.Sync()
		ct, st := sdk.NewInMemoryTransports()
		if _, err := a.Facade.Server().Connect(ctx, st, nil); err != nil {
			return nil, nil, err
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
		return a, cs, err
	}
	call := func(cs *sdk.ClientSession, name string, args map[string]any) (map[string]any, error) {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return nil, err
		}
		if r.IsError {
			return nil, fmt.Errorf("%s: %s", name, r.Content[0].(*sdk.TextContent).Text)
		}
		var m map[string]any
		err = json.Unmarshal([]byte(r.Content[0].(*sdk.TextContent).Text), &m)
		return m, err
	}

	// Progressive: the registry, discover's listing, search by own name.
	a, cs, err := open("progressive")
	if err != nil {
		return res, err
	}
	loaded := a.Registry().Tools("hub")
	res.Loaded = len(loaded)
	for _, t := range loaded {
		res.LongestName = max(res.LongestName, len(t.Canonical))
		if t.Canonical != "hub_"+t.Name {
			res.Unreadable++
		}
	}
	cursor := ""
	for page := 0; page < 1000; page++ {
		args := map[string]any{"limit": 50}
		if cursor != "" {
			args["cursor"] = cursor
		}
		m, err := call(cs, "agent_tools_hub_discover", args)
		if err != nil {
			return res, err
		}
		list, _ := m["tools"].([]any)
		res.Discover += len(list)
		next, _ := m["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	for _, t := range loaded {
		_, tool, _ := strings.Cut(t.Name, "__")
		m, err := call(cs, "agent_tools_hub_discover", map[string]any{"query": tool + " " + t.Description, "limit": 50})
		if err != nil {
			return res, err
		}
		hits, _ := m["results"].([]any)
		for _, h := range hits {
			if hm, _ := h.(map[string]any); hm["name"] == t.Name {
				res.Search++
				break
			}
		}
	}
	// By canonical name, as `agent-tools call NAME` does.
	for _, t := range loaded {
		// Resolved is what counts: empty arguments may then fail validation.
		resp := a.Call(ctx, &pipeline.Request{Caller: policy.Caller{Session: "bench"}, Via: "cli", Tool: t.Canonical, Args: json.RawMessage(`{}`)})
		if resp.Err == nil || resp.Err.Code != toolerr.UnknownTool {
			res.CLICallable++
		}
	}
	cs.Close()
	a.Close()

	a, _, err = open("flat")
	if err != nil {
		return res, err
	}
	for _, t := range a.Facade.Tools() {
		if strings.HasPrefix(t.Name, "hub_") {
			res.FlatOffered++
		}
	}
	a.Close()
	return res, nil
}
