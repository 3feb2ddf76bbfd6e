package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agenttools "github.com/agent-tools/agent-tools"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

// The three phases: New (no side effects), registration, Start; Close at
// the end.
func Example() {
	ctx := context.Background()
	rt, err := agenttools.New(agenttools.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	if err := rt.AddTool(&agenttools.Tool{Namespace: "clock", Action: "now", Description: "The time of day.", ReadOnly: true},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "noon", nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	res, err := rt.Call(ctx, "clock_now", nil)
	fmt.Println(res.Text, err)
	// Output: noon <nil>
}

// A typed tool: the schemas come from the Go types; the in-process call
// takes the full pipeline without HTTP.
func ExampleAddTool() {
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	if err := agenttools.AddTool(rt, &agenttools.Tool{Namespace: "hello", Action: "greet", Description: "Greet someone by name.", ReadOnly: true},
		func(ctx context.Context, call *agenttools.CallInfo, in greetIn) (greetOut, error) {
			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		}); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	res, err := rt.Call(context.Background(), "hello_greet", map[string]any{"name": "Ada"})
	fmt.Println(res.Text, err)
	// Output: {"greeting":"Hello, Ada!"} <nil>
}

// A tool with its own JSON Schema and a handler of raw arguments. A tool
// that changes state needs confirmation; an argument the schema refuses
// gets a teaching error before the handler runs.
func ExampleRuntime_AddTool() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	schema := &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"slot": {Type: "string"}}, Required: []string{"slot"}}
	if err := rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "create", Description: "Book a slot.", InputSchema: schema},
		func(ctx context.Context, call *agenttools.CallInfo, args json.RawMessage) (any, error) {
			return "booked", nil
		}); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}

	_, err := rt.Call(ctx, "booking_create", map[string]any{"slot": 9})
	fmt.Println(err.(*agenttools.ToolError).Code)
	_, err = rt.Call(ctx, "booking_create", map[string]any{"slot": "09:00"})
	fmt.Println(err.(*agenttools.ToolError).Code)
	res, _ := rt.Call(ctx, "booking_create", map[string]any{"slot": "09:00", agenttools.ConfirmArg: true})
	fmt.Println(res.Text)
	// Output:
	// INVALID_ARGUMENTS
	// CONFIRMATION_REQUIRED
	// booked
}

// A handler that returns a *ToolError: the agent reads its code and hint
// as they are, not a generic BACKEND_ERROR.
func ExampleToolError() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	if err := rt.AddTool(&agenttools.Tool{Namespace: "rooms", Action: "get", Description: "A room by number.", ReadOnly: true},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) {
			return nil, &agenttools.ToolError{Code: agenttools.CodeInvalidArguments,
				Message: "room 13 does not exist", Hint: "Call rooms_list for the room numbers."}
		}); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}

	_, err := rt.Call(ctx, "rooms_get", nil)
	var te *agenttools.ToolError
	if errors.As(err, &te) {
		fmt.Println(te.Code == agenttools.CodeInvalidArguments)
		fmt.Println(te.Hint)
	}
	// Output:
	// true
	// Call rooms_list for the room numbers.
}

// A long call reports its progress to a client that asked for it (here the
// official go-sdk's client, over the HTTP handler).
func ExampleCallInfo_Progress() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{Mode: "flat"})
	defer rt.Close()
	if err := rt.AddTool(&agenttools.Tool{Namespace: "index", Action: "rebuild", Description: "Rebuild the index.", ReadOnly: true},
		func(_ context.Context, call *agenttools.CallInfo, _ json.RawMessage) (any, error) {
			call.Progress(1, 2, "half of the files")
			return "rebuilt", nil
		}); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rt.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	progress := make(chan string, 8)
	c := sdk.NewClient(&sdk.Implementation{Name: "example"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			progress <- fmt.Sprintf("%v/%v %s", r.Params.Progress, r.Params.Total, r.Params.Message)
		}})
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "index_rebuild"}
	params.SetProgressToken("rebuild-1")
	res, _ := cs.CallTool(ctx, params)
	fmt.Println(<-progress)
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	// Output:
	// 1/2 half of the files
	// rebuilt
}

// Under policy.confirm: token the agent confirms with the token that the
// CONFIRMATION_REQUIRED error carries in its retry, so that a confirmation
// is always about the call the person saw.
func ExampleSession_Call() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{ConfigYAML: []byte("policy: {confirm: token}\n")})
	defer rt.Close()
	if err := rt.AddTool(&agenttools.Tool{Namespace: "files", Action: "delete", Description: "Delete a file."},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "deleted", nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	s := rt.NewSession(agenttools.SessionOptions{Client: "panel-agent"})
	defer s.Close()

	_, err := s.Call(ctx, "files_delete", map[string]any{"path": "a.txt"})
	te := err.(*agenttools.ToolError)
	fmt.Println(te.Code)
	retry := te.Body["error"].(map[string]any)["retry"].(map[string]any)
	args := retry["arguments"].(map[string]any)
	_, isToken := args[agenttools.ConfirmArg].(string)
	fmt.Println("token:", isToken)
	res, err := s.Call(ctx, "files_delete", args)
	fmt.Println(res.Text, err)
	// Output:
	// CONFIRMATION_REQUIRED
	// token: true
	// deleted <nil>
}

// A session whose person answers confirmation requests in the service's
// own dialog: the agent never passes ConfirmArg.
func ExampleSessionOptions_confirm() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	if err := rt.AddTool(&agenttools.Tool{Namespace: "booking", Action: "cancel", Description: "Cancel a booking."},
		func(_ context.Context, call *agenttools.CallInfo, _ json.RawMessage) (any, error) {
			return "cancelled for " + call.User, nil
		}); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	s := rt.NewSession(agenttools.SessionOptions{User: "ada",
		Confirm: func(_ context.Context, message string) (agenttools.Approval, error) {
			fmt.Println("asked the person")
			return agenttools.ApprovedOnce, nil
		}})
	defer s.Close()
	res, err := s.Call(ctx, "booking_cancel", nil)
	fmt.Println(res.Text, err)
	// Output:
	// asked the person
	// cancelled for ada <nil>
}

// Toggling a plugin changes what every session can call at once.
func ExampleRuntime_SetEnabled() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	if err := rt.AddPlugin("clients", agenttools.PluginOptions{Description: "The service's clients.", ReadOnly: []string{"list"}}); err != nil {
		log.Fatal(err)
	}
	if err := rt.AddTool(&agenttools.Tool{Namespace: "clients", Action: "list", Description: "List clients."},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "[]", nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}

	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	if err := rt.SetEnabled(ctx, "clients", false); err != nil {
		log.Fatal(err)
	}
	<-s.ToolsChanged()
	_, err := s.Call(ctx, "clients_list", nil)
	fmt.Println(err.(*agenttools.ToolError).Code)
	if err := rt.SetEnabled(ctx, "clients", true); err != nil {
		log.Fatal(err)
	}
	<-s.ToolsChanged()
	res, _ := s.Call(ctx, "clients_list", nil)
	fmt.Println(res.Text)
	fmt.Println(errors.Is(rt.SetEnabled(ctx, "nope", true), agenttools.ErrUnknownProvider))
	// Output:
	// PROVIDER_UNAVAILABLE
	// []
	// true
}

// A plugin declared disabled serves nothing until it is enabled; a session
// lists what it can call now.
func ExampleRuntime_AddPlugin() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	if err := rt.AddPlugin("reports", agenttools.PluginOptions{Description: "Monthly reports.", Disabled: true}); err != nil {
		log.Fatal(err)
	}
	if err := rt.AddTool(&agenttools.Tool{Namespace: "reports", Action: "latest", Description: "The latest report.", ReadOnly: true},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "March", nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.AddTool(&agenttools.Tool{Namespace: "core", Action: "ping", Description: "Ping.", ReadOnly: true},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "pong", nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}

	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	list := func() {
		tools, _ := s.Tools()
		var names []string
		for _, t := range tools {
			names = append(names, t.Name)
		}
		slices.Sort(names)
		fmt.Println(strings.Join(names, " "))
	}
	list()
	if err := rt.SetEnabled(ctx, "reports", true); err != nil {
		log.Fatal(err)
	}
	list()
	// Output:
	// core_ping
	// core_ping reports_latest
}

// Mount the MCP endpoint on the service's own mux; an MCP client (here the
// official go-sdk's) connects to it.
func ExampleRuntime_Handler() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{Mode: "flat"})
	defer rt.Close()
	if err := rt.AddPlugin("core", agenttools.PluginOptions{ReadOnly: []string{"hello"}}); err != nil {
		log.Fatal(err)
	}
	if err := rt.AddTool(&agenttools.Tool{Namespace: "core", Action: "hello", Description: "Say hello."},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "hello", nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/mcp", rt.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "example"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "core_hello"})
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	// Output: hello
}

// Serve MCP over stdio, here on pipes to an in-process client (a CLI agent
// would be the process's parent, on os.Stdin and os.Stdout).
func ExampleRuntime_ServeStdio() {
	ctx := context.Background()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	rt, _ := agenttools.New(agenttools.Options{Mode: "flat", Stdin: toServer, Stdout: fromServer})
	defer rt.Close()
	if err := rt.AddTool(&agenttools.Tool{Namespace: "core", Action: "echo", Description: "Echo the text.", ReadOnly: true},
		func(_ context.Context, _ *agenttools.CallInfo, args json.RawMessage) (any, error) { return args, nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	var served sync.WaitGroup
	served.Go(func() {
		if err := rt.ServeStdio(ctx); err != nil {
			fmt.Println("serve:", err)
		}
	})

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "example"}, nil).
		Connect(ctx, &sdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		log.Fatal(err)
	}
	res, _ := cs.CallTool(ctx, &sdk.CallToolParams{Name: "core_echo", Arguments: map[string]any{"text": "hi"}})
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	cs.Close() // closes the server's input: ServeStdio returns
	served.Wait()
	// Output: {"text":"hi"}
}

// shelf is a backend of its own, as a module outside agent-tools writes
// one: it lists its tools and runs them.
type shelf struct {
	mu    sync.Mutex
	books []string
}

var _ agenttools.Provider = (*shelf)(nil)

func (s *shelf) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{ID: "shelf", Description: "The books on the shelf."}
}

func (s *shelf) Tools(context.Context) ([]*agenttools.Tool, error) {
	title := &jsonschema.Schema{Type: "object", Required: []string{"title"},
		Properties: map[string]*jsonschema.Schema{"title": {Type: "string", MinLength: jsonschema.Ptr(1)}}}
	return []*agenttools.Tool{
		{Action: "list", Description: "List the books.", ReadOnly: true},
		{Action: "add", Description: "Put a book on the shelf.", InputSchema: title},
	}, nil
}

func (s *shelf) Call(_ context.Context, call *agenttools.CallInfo, args json.RawMessage) (*agenttools.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch call.Action {
	case "add":
		var in struct{ Title string }
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		s.books = append(s.books, in.Title)
		return &agenttools.Result{Text: "added " + in.Title}, nil
	case "list":
		return &agenttools.Result{Text: fmt.Sprint(s.books)}, nil
	}
	return nil, fmt.Errorf("no tool %q", call.Action)
}

// A provider written outside this module: its calls take the same pipeline
// as every other (schema validation, confirmation of a tool that is not
// read-only).
func ExampleRuntime_AddProvider() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	if err := rt.AddProvider(&shelf{}); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}

	_, err := rt.Call(ctx, "shelf_add", map[string]any{"title": ""})
	fmt.Println(err.(*agenttools.ToolError).Code)
	_, err = rt.Call(ctx, "shelf_add", map[string]any{"title": "Dune"})
	fmt.Println(err.(*agenttools.ToolError).Code)
	res, _ := rt.Call(ctx, "shelf_add", map[string]any{"title": "Dune", agenttools.ConfirmArg: true})
	fmt.Println(res.Text)
	res, _ = rt.Call(ctx, "shelf_list", nil)
	fmt.Println(res.Text)
	// Output:
	// INVALID_ARGUMENTS
	// CONFIRMATION_REQUIRED
	// added Dune
	// [Dune]
}

// menu is a Provider whose tools change on their own (a dish comes off
// the menu): as a ChangeNotifier it says when, and the runtime re-lists it
// then and only then.
type menu struct {
	mu      sync.Mutex
	dishes  []string
	changed func()
}

func (m *menu) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{ID: "menu", Description: "Today's dishes."}
}

func (m *menu) Tools(context.Context) ([]*agenttools.Tool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*agenttools.Tool
	for _, d := range m.dishes {
		out = append(out, &agenttools.Tool{Action: "order_" + d, Description: "Order the " + d + ".", ReadOnly: true})
	}
	return out, nil
}

func (m *menu) Call(_ context.Context, call *agenttools.CallInfo, _ json.RawMessage) (*agenttools.Result, error) {
	return &agenttools.Result{Text: "ordered: " + call.Action}, nil
}

// NotifyChanges keeps the runtime's callback (the latest one).
func (m *menu) NotifyChanges(changed func()) {
	m.mu.Lock()
	m.changed = changed
	m.mu.Unlock()
}

// serve changes the menu, then tells the runtime.
func (m *menu) serve(dishes ...string) {
	m.mu.Lock()
	m.dishes = dishes
	changed := m.changed
	m.mu.Unlock()
	if changed != nil {
		changed()
	}
}

// A Provider that reports its changes: the runtime trusts its last listing
// until it calls the function NotifyChanges gave it (a Provider without it
// is re-listed at most once per Options.RelistInterval), then re-lists it
// and tells every session list_changed.
func ExampleChangeNotifier() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{})
	defer rt.Close()
	m := &menu{dishes: []string{"soup", "tart"}}
	if err := rt.AddProvider(m); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	s := rt.NewSession(agenttools.SessionOptions{})
	defer s.Close()
	names := func() []string {
		tools, _ := s.Tools()
		var out []string
		for _, t := range tools {
			out = append(out, t.Name)
		}
		return out
	}
	fmt.Println(names())
	m.serve("soup")
	<-s.ToolsChanged()
	fmt.Println(names())
	// Output:
	// [menu_order_soup menu_order_tart]
	// [menu_order_soup]
}

// The config as a value: the same file format as agent-tools.yaml, here a
// policy that hides a tool from every agent.
func ExampleOptions_configYAML() {
	ctx := context.Background()
	rt, _ := agenttools.New(agenttools.Options{ConfigYAML: []byte("policy:\n  deny: [admin_reset]\n")})
	defer rt.Close()
	if err := rt.AddTool(&agenttools.Tool{Namespace: "admin", Action: "reset", Description: "Reset everything."},
		func(context.Context, *agenttools.CallInfo, json.RawMessage) (any, error) { return "reset", nil }); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}

	// A hidden tool answers exactly as one that does not exist.
	_, err := rt.Call(ctx, "admin_reset", map[string]any{agenttools.ConfirmArg: true})
	fmt.Println(err.(*agenttools.ToolError).Code)
	// Output: UNKNOWN_TOOL
}

// A config the runtime cannot run with is a *ConfigError, whatever its
// source: an option of New, or the YAML at Start.
func ExampleConfigError() {
	_, err := agenttools.New(agenttools.Options{Mode: "sideways"})
	var ce *agenttools.ConfigError
	fmt.Println(errors.As(err, &ce))

	rt, _ := agenttools.New(agenttools.Options{ConfigYAML: []byte("mode: [\n")})
	err = rt.Start(context.Background())
	fmt.Println(errors.As(err, &ce))
	// Output:
	// true
	// true
}
