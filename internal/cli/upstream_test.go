package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as an upstream MCP server over stdio: run as
// `cli.test agent-tools-test-upstream MODE [FILE]`, TestMain serves
// instead of running the tests.
//
//	everything   the tool list of @modelcontextprotocol/server-everything
//	             (the README's tour upstream, which npx would download)
//	file FILE    the tools of FILE ([{name, description, inputSchema}]),
//	             read at start: a test edits FILE to change the upstream
const upstreamArg = "agent-tools-test-upstream"

// runUpstream serves the upstream args asks for and returns the exit status.
func runUpstream(args []string) int {
	s := sdk.NewServer(&sdk.Implementation{Name: "cli-test-upstream", Version: "1"}, nil)
	var tools []upstreamTool
	switch {
	case len(args) == 1 && args[0] == "everything":
		tools = everythingTools
	case len(args) == 2 && args[0] == "file":
		data, err := os.ReadFile(args[1])
		if err == nil {
			err = json.Unmarshal(data, &tools)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "upstream:", err)
			return 2
		}
	default:
		fmt.Fprintln(os.Stderr, "upstream: want everything, or file FILE")
		return 2
	}
	for _, t := range tools {
		schema := t.InputSchema
		if schema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		name := t.Name
		s.AddTool(&sdk.Tool{Name: name, Description: t.Description, InputSchema: schema},
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " " + string(req.Params.Arguments)}}}, nil
			})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

type upstreamTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// everythingTools are the tools server-everything lists to a client
// without sampling, elicitation or roots (names and descriptions as its
// 2025 releases publish them).
var everythingTools = []upstreamTool{
	{"echo", "Echoes back the input string", json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`)},
	{"get-annotated-message", "Demonstrates how annotations can be used to provide metadata about content.", json.RawMessage(`{"type":"object","properties":{"messageType":{"type":"string","enum":["error","success","debug"]},"includeImage":{"type":"boolean","default":false}},"required":["messageType"]}`)},
	{"get-env", "Returns all environment variables, helpful for debugging MCP server configuration", nil},
	{"get-resource-links", "Returns up to ten resource links that reference different types of resources", json.RawMessage(`{"type":"object","properties":{"count":{"type":"number","minimum":1,"maximum":10,"default":3}}}`)},
	{"get-resource-reference", "Returns a resource reference that can be used by MCP clients", json.RawMessage(`{"type":"object","properties":{"resourceType":{"type":"string","enum":["Text","Blob"]},"resourceId":{"type":"number"}}}`)},
	{"get-structured-content", "Returns structured content along with an output schema for client data validation", json.RawMessage(`{"type":"object","properties":{"location":{"type":"string","enum":["New York","Chicago","Los Angeles"]}},"required":["location"]}`)},
	{"get-sum", "Returns the sum of two numbers", json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number","description":"Second number"}},"required":["a","b"]}`)},
	{"get-tiny-image", "Returns a tiny MCP logo image.", nil},
	{"gzip-file-as-resource", "Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"data":{"type":"string"},"outputType":{"type":"string","enum":["resource","resourceLink"]}}}`)},
	{"toggle-simulated-logging", "Toggles simulated, random-leveled logging on or off.", nil},
	{"toggle-subscriber-updates", "Toggles simulated resource subscription updates on or off.", nil},
	{"trigger-long-running-operation", "Demonstrates a long running operation with progress updates.", json.RawMessage(`{"type":"object","properties":{"duration":{"type":"number","default":10},"steps":{"type":"number","default":5}}}`)},
}
