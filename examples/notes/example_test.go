package notes_test

import (
	"context"
	"fmt"
	"log"

	agenttools "github.com/agent-tools/agent-tools"
	"github.com/agent-tools/agent-tools/examples/notes"
)

// A program serves its notebook beside its other tools: one AddProvider.
func Example() {
	ctx := context.Background()
	rt, err := agenttools.New(agenttools.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	if err := rt.AddProvider(notes.New(notes.Note{Title: "standup", Body: "demo the notes provider"})); err != nil {
		log.Fatal(err)
	}
	if err := rt.Start(ctx); err != nil {
		log.Fatal(err)
	}
	res, _ := rt.Call(ctx, "notes_search", map[string]any{"query": "demo"})
	fmt.Println(res.Text)
	_, err = rt.Call(ctx, "notes_delete", map[string]any{"title": "standup"})
	fmt.Println(err.(*agenttools.ToolError).Code)
	// Output:
	// {"titles":["standup"]}
	// CONFIRMATION_REQUIRED
}
