package notes_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	agenttools "github.com/agent-tools/agent-tools"
	"github.com/agent-tools/agent-tools/examples/notes"
)

// start serves a notebook with two notes; the runtime (and so the
// notebook) closes with the test.
func start(t *testing.T, o agenttools.Options) (*agenttools.Runtime, *notes.Book) {
	t.Helper()
	book := notes.New(
		notes.Note{Title: "groceries", Body: "milk, eggs", Tags: []string{"home"}},
		notes.Note{Title: "standup", Body: "demo the notes provider", Tags: []string{"work"}},
	)
	rt, err := agenttools.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.AddProvider(book); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, book
}

// TestCallsTakeThePipeline: a provider outside the module gets what every
// tool gets: its schemas enforced before Call, confirmation of the tools
// that change state, and its own *ToolError passed to the agent as it is.
func TestCallsTakeThePipeline(t *testing.T) {
	rt, _ := start(t, agenttools.Options{})
	confirm := map[string]any{agenttools.ConfirmArg: true}
	with := func(args map[string]any, more map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range args {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		tool     string
		args     map[string]any
		wantCode string // "" for success
		want     string // in the text, or in the message and hint
	}{
		{"a read needs no confirmation", "notes_read", map[string]any{"title": "groceries"}, "", `"body":"milk, eggs"`},
		{"search by words", "notes_search", map[string]any{"query": "DEMO notes"}, "", `{"titles":["standup"]}`},
		{"a missing argument", "notes_read", map[string]any{}, agenttools.CodeInvalidArguments, "title"},
		{"an argument of the wrong type", "notes_search", map[string]any{"query": 7}, agenttools.CodeInvalidArguments, "query"},
		{"an empty title", "notes_read", map[string]any{"title": ""}, agenttools.CodeInvalidArguments, "title"},
		{"the provider's own error keeps its hint", "notes_read", map[string]any{"title": "nope"}, agenttools.CodeInvalidArguments, "notes_list"},
		{"a write asks for confirmation", "notes_write", map[string]any{"title": "todo", "body": "x"}, agenttools.CodeConfirmationRequired, ""},
		{"a delete asks for confirmation", "notes_delete", map[string]any{"title": "groceries"}, agenttools.CodeConfirmationRequired, ""},
		{"a confirmed write runs", "notes_write", with(map[string]any{"title": "todo", "body": "x"}, confirm), "", "saved todo"},
		{"a confirmed delete runs", "notes_delete", with(map[string]any{"title": "groceries"}, confirm), "", "deleted groceries"},
		{"and the list shows both", "notes_list", nil, "", `{"titles":["standup","todo"]}`},
		{"a tool it does not list", "notes_rename", map[string]any{}, agenttools.CodeUnknownTool, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := rt.Call(context.Background(), tc.tool, tc.args)
			if tc.wantCode == "" {
				if err != nil || !strings.Contains(res.Text, tc.want) {
					t.Fatalf("%s: %v, %v; want text with %q", tc.tool, res, err, tc.want)
				}
				return
			}
			var te *agenttools.ToolError
			if !errors.As(err, &te) || te.Code != tc.wantCode {
				t.Fatalf("%s: %v; want %s", tc.tool, err, tc.wantCode)
			}
			if !strings.Contains(te.Message+" "+te.Hint, tc.want) {
				t.Errorf("%s: %q / %q does not mention %q", tc.tool, te.Message, te.Hint, tc.want)
			}
		})
	}
}

// TestCloseClosesTheProvider: the runtime's Close reaches the provider
// (it implements agenttools.Closer).
func TestCloseClosesTheProvider(t *testing.T) {
	rt, book := start(t, agenttools.Options{})
	if book.Closed() {
		t.Fatal("closed before the runtime")
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if !book.Closed() {
		t.Error("the runtime's Close did not close the provider")
	}
}

// TestMCPClientSeesTheTools: an MCP client (the official go-sdk's) lists
// the provider's tools with their schemas and annotations, and a call over
// HTTP reaches Call.
func TestMCPClientSeesTheTools(t *testing.T) {
	rt, _ := start(t, agenttools.Options{Mode: "flat"})
	mux := http.NewServeMux()
	mux.Handle("/mcp", rt.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "notes-test"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*sdk.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	for _, name := range []string{"notes_list", "notes_read", "notes_search", "notes_write", "notes_delete"} {
		if tools[name] == nil {
			t.Errorf("%s is not listed (got %d tools)", name, len(list.Tools))
		}
	}
	if read := tools["notes_read"]; read != nil {
		schema, _ := json.Marshal(read.InputSchema)
		if !strings.Contains(string(schema), `"title"`) {
			t.Errorf("notes_read's input schema lost its property: %s", schema)
		}
		if read.Annotations == nil || !read.Annotations.ReadOnlyHint {
			t.Errorf("notes_read is not annotated read-only: %+v", read.Annotations)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "notes_read", Arguments: map[string]any{"title": "standup"}})
	if err != nil || res.IsError {
		t.Fatalf("notes_read over MCP: %v %+v", err, res)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "demo the notes provider") {
		t.Errorf("notes_read over MCP = %s", text)
	}
}
