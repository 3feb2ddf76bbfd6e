package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"net/http/httptest"

	agenttools "github.com/agent-tools/agent-tools"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// A typed tool: the schemas come from the Go types; the in-process call
// takes the full pipeline without HTTP.
func ExampleAddTool() {
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	agenttools.AddTool(rt, agenttools.Tool{Namespace: "hello", Action: "greet", Description: "Greet someone by name.", ReadOnly: true},
		func(ctx context.Context, call *agenttools.CallInfo, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err := rt.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	res, err := rt.Call(context.Background(), "hello_greet", map[string]any{"name": "Ada"})
	fmt.Println(res.Text, err)
	// Output: {"greeting":"Hello, Ada!"} <nil>
}

// The seed's registrar shape: name parts, description, a JSON Schema and a
// handler. A tool that changes state needs confirmation.
func ExampleRuntime_RegisterTool() {
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	schema := json.RawMessage(`{"type":"object","properties":{"slot":{"type":"string"}},"required":["slot"]}`)
	rt.RegisterTool("booking", "create", "Book a slot.", schema,
		func(ctx context.Context, call *agenttools.CallInfo, args json.RawMessage) (any, error) {
			return "booked", nil
		})
	rt.Start(context.Background())

	_, err := rt.Call(context.Background(), "booking_create", map[string]any{"slot": "09:00"})
	var te *agenttools.ToolError
	if errors.As(err, &te) {
		fmt.Println(te.Code)
	}
	res, _ := rt.Call(context.Background(), "booking_create", map[string]any{"slot": "09:00", agenttools.ConfirmArg: true})
	fmt.Println(res.Text)
	// Output:
	// CONFIRMATION_REQUIRED
	// booked
}

// Toggling a plugin changes what every session can call at once.
func ExampleRuntime_SetEnabled() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	rt.AddProvider("clients", agenttools.ProviderOptions{Description: "The service's clients.", ReadOnly: []string{"list"}})
	rt.RegisterTool("clients", "list", "List clients.", nil,
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "[]", nil })
	rt.Start(ctx)

	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	rt.SetEnabled(ctx, "clients", false)
	<-s.ToolsChanged()
	_, err := s.Call(ctx, "clients_list", nil)
	fmt.Println(err.(*agenttools.ToolError).Code)
	rt.SetEnabled(ctx, "clients", true)
	<-s.ToolsChanged()
	res, _ := s.Call(ctx, "clients_list", nil)
	fmt.Println(res.Text)
	// Output:
	// PROVIDER_UNAVAILABLE
	// []
}

// Mount the MCP endpoint on the service's own mux; an MCP client (here the
// official go-sdk's) connects to it.
func ExampleRuntime_Handler() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{Mode: "flat"})
	defer rt.Close()
	rt.AddProvider("core", agenttools.ProviderOptions{ReadOnly: []string{"hello"}})
	rt.RegisterTool("core", "hello", "Say hello.", nil,
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "hello", nil })
	rt.Start(ctx)

	mux := http.NewServeMux()
	mux.Handle("/mcp", rt.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "example"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "core_hello"})
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	// Output: hello
}
