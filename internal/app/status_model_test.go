package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRuntimeStatusHidesConfigPath: runtime_status, called by a model or
// by a script (code mode, where scripts are read-only), names no path of
// the user's files: not the config's, not the project's, not the ones its
// load problems name (written as "<project>/…"); the runtime's own Status
// (doctor, the CLI, the console) keeps them.
func TestRuntimeStatusHidesConfigPath(t *testing.T) {
	for _, mode := range []string{"flat", "code"} {
		t.Run(mode, func(t *testing.T) {
			p := newProject(t)
			p.file(t, "agent-tools.yaml", "mode: "+mode+"\n")
			// A plugin directory without its manifest: a load problem that names its path.
			if err := os.Mkdir(filepath.Join(p.dir, "agent-tools-plugin-broken"), 0o755); err != nil {
				t.Fatal(err)
			}
			a, cs := p.connect(t, mode, nil)
			call := &sdk.CallToolParams{Name: "runtime_status", Arguments: map[string]any{}}
			if mode == "code" {
				call = &sdk.CallToolParams{Name: "execute_javascript", Arguments: map[string]any{
					"code": `return await tools.call("runtime_status", {})`}}
			}
			res, err := cs.CallTool(context.Background(), call)
			if err != nil || res.IsError {
				t.Fatalf("%v %+v", err, res)
			}
			got := text(res)
			if sc, err := json.Marshal(res.StructuredContent); err == nil {
				got += string(sc)
			}
			if !strings.Contains(got, "<project>/agent-tools-plugin-broken") || !strings.Contains(got, `"mode"`) {
				t.Fatalf("the status has no load problem written relative to the project: %s", got)
			}
			dirs := []string{p.dir, filepath.Join(p.dir, "agent-tools.yaml")}
			if real, err := filepath.EvalSymlinks(p.dir); err == nil {
				dirs = append(dirs, real)
			}
			if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
				dirs = append(dirs, home)
			}
			for _, d := range dirs {
				if strings.Contains(got, d) {
					t.Errorf("runtime_status names %s: %s", d, got)
				}
			}
			for _, field := range []string{`"config"`, `"projectDir"`} {
				if strings.Contains(got, field) {
					t.Errorf("runtime_status has %s: %s", field, got)
				}
			}
			if st := a.Status(); st.Config != filepath.Join(p.dir, "agent-tools.yaml") || st.ProjectDir != p.dir {
				t.Errorf("Status (doctor's) lost the paths: config %q, project %q", st.Config, st.ProjectDir)
			}
		})
	}
}
