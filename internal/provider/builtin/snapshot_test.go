package builtin

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

var update = flag.Bool("update", false, "rewrite the tool snapshots")

// TestToolSnapshots pins each built-in tool (name, description, schema,
// safety class) in its own file under testdata/toolsnaps; run with -update
// after an intended change. A new tool without a snapshot, or a snapshot of
// a tool that is gone, fails.
func TestToolSnapshots(t *testing.T) {
	tools, err := New(Options{}).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	items := map[string]any{}
	for _, tl := range tools {
		items[tl.Name] = tl
	}
	testutil.Snapshots(t, filepath.Join("testdata", "toolsnaps"), *update, items)
}
