package app_test

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/pipeline"
)

// TestSkillsFollowTheNamingScheme: under naming: lossless a skill run is
// known (policy, audit, loop guard) by its lossless canonical name, and a
// skill's tools.canonical and tools.call name the provider's tools as the
// catalog does.
func TestSkillsFollowTheNamingScheme(t *testing.T) {
	for _, scheme := range []naming.Scheme{naming.Readable, naming.Lossless} {
		t.Run(string(scheme), func(t *testing.T) {
			p := newProject(t)
			p.file(t, "agent-tools.yaml", "naming: "+string(scheme)+`
mode: progressive
providers:
  - id: mycli
    kind: cli
    allow: [echo]
    skills: skills
    tools:
      - name: say-hi
        description: Says hi.
        argv: [echo, hi]
        readonly: true
`)
			if err := os.MkdirAll(filepath.Join(p.dir, "skills"), 0o755); err != nil {
				t.Fatal(err)
			}
			p.file(t, "skills/say-hello.js", `export const meta = {description: 'Greets through the cli tool.'};
export async function run(tools, args) {
  const said = await tools.call("say-hi", {});
  return {canonical: tools.canonical("say-hi"), said: said};
}
`)
			a, cs := p.connect(t, "", nil)
			tool, _ := scheme.Canonical("mycli", "say-hi", false)
			skill, _ := scheme.Canonical("mycli", "say-hello", false)
			if _, ok := a.Registry().Lookup(tool); !ok {
				t.Fatalf("no tool %q in the catalog", tool)
			}
			// The model's path: the provider's run_skill meta-tool over MCP.
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "agent_tools_mycli_run_skill",
				Arguments: map[string]any{"skill": "say-hello", "arguments": map[string]any{}}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("skill run: %s", text(res))
			}
			if !strings.Contains(text(res), `"canonical":"`+tool+`"`) || !strings.Contains(text(res), "hi") {
				t.Errorf("skill result %s: want tools.canonical %q and the tool's output", text(res), tool)
			}
			// Policy, audit and the loop guard know the run by its canonical name.
			req := &pipeline.Request{Skill: true, Provider: "mycli", Tool: "say-hello", Args: json.RawMessage(`{}`)}
			a.Call(context.Background(), req)
			if req.Resolved.Canonical != skill {
				t.Errorf("the skill run is known as %q, want %q", req.Resolved.Canonical, skill)
			}
		})
	}
}

// TestLocalRename: local: takes rename: like every provider kind, so the
// hint that suggests it for a script (a flat name too long, a collision)
// can be followed.
func TestLocalRename(t *testing.T) {
	p := newProject(t)
	long := "deploy-" + strings.Repeat("x", 70)
	p.script(t, long, "#!/bin/sh\n# @description Deploys.\n# @readonly\necho deployed\n")
	p.file(t, "agent-tools.yaml", "local:\n  rename: {"+long+": deploy}\n")
	a, _ := p.connect(t, "flat", nil)
	tool, ok := a.Registry().Lookup("deploy")
	if !ok || tool.Name != long || tool.Provider != "local" {
		t.Fatalf("the renamed script: %+v, found %v", tool, ok)
	}
	if _, ok := a.Registry().Lookup(long); ok {
		t.Errorf("the script is still reachable by its own name")
	}
	for _, d := range a.Diagnostics() {
		if d.Status == "failed" || strings.Contains(d.Reason, "rename") {
			t.Errorf("doctor: %+v", d)
		}
	}
}

// TestLocalRenameHint: doctor's fix for a script whose flat name is too
// long names the place the config takes it, local:, and following it
// clears the warning.
func TestLocalRenameHint(t *testing.T) {
	p := newProject(t)
	long := "deploy-" + strings.Repeat("x", 70)
	p.script(t, long, "#!/bin/sh\n# @description Deploys.\n# @readonly\necho deployed\n")
	a, _ := p.connect(t, "flat", nil)
	var hint string
	for _, d := range a.Registry().FlatNameDiagnostics(true) {
		if d.Item == long {
			hint = d.Reason
		}
	}
	if !strings.Contains(hint, "under `local:`") {
		t.Fatalf("the flat-name hint for a script: %q", hint)
	}
}
