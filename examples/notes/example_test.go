package notes_test

import (
	"context"
	"fmt"

	agenttools "github.com/agent-tools/agent-tools"
	"github.com/agent-tools/agent-tools/examples/notes"
)

// A program serves its notebook beside its other tools: one AddProvider.
func Example() {
	ctx := context.Background()
	rt, err := agenttools.New(agenttools.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	rt.AddProvider(notes.New(notes.Note{Title: "standup", Body: "demo the notes provider"}))
	if err := rt.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	res, _ := rt.Call(ctx, "notes_search", map[string]any{"query": "demo"})
	fmt.Println(res.Text)
	_, err = rt.Call(ctx, "notes_delete", map[string]any{"title": "standup"})
	fmt.Println(err.(*agenttools.ToolError).Code)
	// Output:
	// {"titles":["standup"]}
	// CONFIRMATION_REQUIRED
}
