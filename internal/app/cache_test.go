package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultCache: the cache: section through the app: a read-only script
// runs once for two identical calls (the audit says hit), a mutating one
// matched by the same glob runs every time and doctor says why.
func TestResultCache(t *testing.T) {
	p := newProject(t)
	// Each run appends a line to runs.txt and prints how many there are.
	p.script(t, "forecast", "#!/bin/sh\n# @description The forecast.\n# @readonly\necho run >> \"$(dirname \"$0\")/../../runs.txt\"\nwc -l < \"$(dirname \"$0\")/../../runs.txt\"\n")
	p.script(t, "set_alert", "#!/bin/sh\n# @description Set an alert.\necho run >> \"$(dirname \"$0\")/../../runs.txt\"\necho set\n")
	p.file(t, "agent-tools.yaml", "mode: flat\naudit:\n  path: audit.jsonl\nlocal:\n  requireConfirm: false\ncache:\n  - tools: [\"*\"]\n    ttl: 5m\n")
	a, cs := p.connect(t, "", nil)
	call := func(name string) string {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", name, err, allText(res))
		}
		return strings.TrimSpace(text(res))
	}
	if first, second := call("forecast"), call("forecast"); first != "1" || second != "1" {
		t.Fatalf("forecast answered %q then %q: want the kept first answer", first, second)
	}
	call("set_alert")
	call("set_alert")
	runs, err := os.ReadFile(filepath.Join(p.dir, "runs.txt"))
	if err != nil || strings.Count(string(runs), "run") != 3 {
		t.Fatalf("scripts ran %d times, want 3 (forecast once, set_alert twice): %v", strings.Count(string(runs), "run"), err)
	}
	var doctor string
	for _, d := range a.Diagnostics() {
		if d.Item == "set_alert" && strings.Contains(d.Reason, "not read-only") {
			doctor = d.Reason
		}
	}
	if doctor == "" {
		t.Fatalf("no doctor line for set_alert: %+v", a.Diagnostics())
	}
	a.Close()
	b, err := os.ReadFile(filepath.Join(p.dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), `"cache":"hit"`) != 1 || strings.Count(string(b), `"cache":"miss"`) != 1 {
		t.Fatalf("audit:\n%s", b)
	}
}
