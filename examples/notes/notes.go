// Package notes is a backend of tools written outside the agent-tools
// module, against its public package only: an in-memory notebook that an
// agent can list, read, search, write and delete. It is what a Go program
// writes to put its own system behind agent-tools' pipeline: the runtime
// validates the arguments against the schemas listed here, asks for
// confirmation before notes_write and notes_delete (they change state),
// audits every call, and only then calls Call.
//
// The module has its own go.mod (with a replace to the repository root),
// so that it compiles only against what agent-tools exports.
package notes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	agenttools "github.com/agent-tools/agent-tools"
)

// Note is one note.
type Note struct {
	Title string   `json:"title"`
	Body  string   `json:"body"`
	Tags  []string `json:"tags,omitempty"`
}

// Book is the notebook. Its methods are safe for concurrent use.
type Book struct {
	tools []*agenttools.Tool // built once: the runtime lists them often

	mu     sync.Mutex
	notes  map[string]Note
	closed bool
}

// The capabilities the runtime looks for, checked at compile time.
var (
	_ agenttools.Provider = (*Book)(nil)
	_ agenttools.Closer   = (*Book)(nil)
)

// New returns a notebook holding notes.
func New(notes ...Note) *Book {
	b := &Book{notes: map[string]Note{}, tools: tools()}
	for _, n := range notes {
		b.notes[n.Title] = n
	}
	return b
}

// Info names the provider: its tools are notes_list, notes_read, ...
func (b *Book) Info() agenttools.ProviderInfo {
	return agenttools.ProviderInfo{
		ID:           "notes",
		Description:  "The user's notebook: list, read, search, write and delete notes.",
		DiscoverHint: "notes, memos, things the user wrote down",
	}
}

type titleIn struct {
	Title string `json:"title" jsonschema:"the note's title, as notes_list shows it"`
}

type searchIn struct {
	Query string `json:"query" jsonschema:"words to find in titles, bodies and tags"`
}

// Tools lists the notebook's tools. The runtime asks again at most once
// per Options.RelistInterval on the call path (the notebook is no
// ChangeNotifier); the list is built once, in New, so that each schema is
// the same value every time and is encoded once.
func (b *Book) Tools(context.Context) ([]*agenttools.Tool, error) { return b.tools, nil }

// tools are the notebook's tools. The schemas are inferred from Go types,
// as agenttools.AddTool does; a title that must not be empty says so, and
// the runtime refuses an empty one before Call.
func tools() []*agenttools.Tool {
	title := schemaFor[titleIn]()
	title.Properties["title"].MinLength = jsonschema.Ptr(1)
	note := schemaFor[Note]()
	note.Properties["title"].MinLength = jsonschema.Ptr(1)
	return []*agenttools.Tool{
		{Action: "list", Description: "List the titles of every note.", ReadOnly: true},
		{Action: "read", Description: "Read one note by its title.", InputSchema: title, ReadOnly: true},
		{Action: "search", Description: "Find notes whose title, body or tags contain the words.", InputSchema: schemaFor[searchIn](), ReadOnly: true},
		{Action: "write", Description: "Create a note, or replace the one of the same title.", InputSchema: note},
		{Action: "delete", Description: "Delete a note by its title.", InputSchema: title},
	}
}

// schemaFor is T's JSON Schema; T is one of this package's own types, so a
// failure is a bug here, not an input to handle.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	return s
}

// Call runs one tool. Arguments are already valid against the tool's
// schema; a note that does not exist is a *ToolError that tells the agent
// what to call instead.
func (b *Book) Call(_ context.Context, call *agenttools.CallInfo, args json.RawMessage) (*agenttools.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("the notebook is closed")
	}
	switch call.Action {
	case "list":
		titles := make([]string, 0, len(b.notes))
		for t := range b.notes {
			titles = append(titles, t)
		}
		slices.Sort(titles)
		return structured(map[string]any{"titles": titles})
	case "read":
		var in titleIn
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		n, ok := b.notes[in.Title]
		if !ok {
			return nil, notFound(in.Title)
		}
		return structured(n)
	case "search":
		var in searchIn
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		var found []string
		for t, n := range b.notes {
			if matches(n, in.Query) {
				found = append(found, t)
			}
		}
		slices.Sort(found)
		return structured(map[string]any{"titles": found})
	case "write":
		var n Note
		if err := json.Unmarshal(args, &n); err != nil {
			return nil, err
		}
		b.notes[n.Title] = n
		return &agenttools.Result{Text: "saved " + n.Title}, nil
	case "delete":
		var in titleIn
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		if _, ok := b.notes[in.Title]; !ok {
			return nil, notFound(in.Title)
		}
		delete(b.notes, in.Title)
		return &agenttools.Result{Text: "deleted " + in.Title}, nil
	}
	return nil, fmt.Errorf("notes has no tool %q", call.Action)
}

// Close empties the notebook; the runtime calls it from its own Close.
func (b *Book) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notes, b.closed = nil, true
	return nil
}

// Closed reports whether Close ran.
func (b *Book) Closed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func notFound(title string) error {
	return &agenttools.ToolError{Code: agenttools.CodeInvalidArguments,
		Message: fmt.Sprintf("no note is titled %q", title),
		Hint:    "Call notes_list for the titles, or notes_search to find one by its words."}
}

func matches(n Note, query string) bool {
	text := strings.ToLower(n.Title + " " + n.Body + " " + strings.Join(n.Tags, " "))
	for w := range strings.FieldsSeq(strings.ToLower(query)) {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// structured answers v as JSON text and structured content.
func structured(v any) (*agenttools.Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &agenttools.Result{Text: string(b), Structured: json.RawMessage(b)}, nil
}
