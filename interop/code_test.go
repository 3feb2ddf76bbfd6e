//go:build unix

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	// shout is a second read-only tool for code mode's script to combine.
	shoutScript = `#!/bin/sh
# @description Upper-case a text (interop fixture).
# @param *text string The text
# @readonly
cat >/dev/null
printf '%s\n' "$AGENT_TOOLS_PARAM_TEXT" | tr a-z A-Z
`
	// secret is read-only but denied by the project's policy.
	secretScript = `#!/bin/sh
# @description Read a secret (denied by policy in the fixture).
# @readonly
cat >/dev/null
echo "leaked"
`
	codeConfig = `mode: code
local:
  dir: .agents/tools
  enabled: true
  requireConfirm: true
policy:
  deny: ["secret"]
audit:
  path: audit.jsonl
`
)

// The TypeScript SDK calls execute_javascript in code mode: one script
// searches, calls two tools and combines their results; the audit shows the
// two calls under the script's request id; a denied tool throws inside the
// script; the server keeps serving.
func TestTSSDKCodeMode(t *testing.T) {
	requirePeers(t)
	t.Parallel()
	project := newProject(t)
	for name, body := range map[string]string{"shout": shoutScript, "secret": secretScript} {
		if err := os.WriteFile(filepath.Join(project, ".agents", "tools", name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(codeConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	cmd := peerCommand(ctx, interopDir, "node", filepath.Join(interopDir, "ts-code.mjs"), project, binPath, "serve")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var obs struct {
		Fatal, ServerStderr string
		Tools               []string
		Combined, Denied    callResult
		After               callResult
	}
	if err := json.Unmarshal(lastLine(stdout.Bytes()), &obs); err != nil || obs.Fatal != "" || runErr != nil {
		t.Fatalf("ts-code: exit %v, %v: %s\nstdout: %s\nnode stderr: %s\nserver stderr: %s", runErr, err, obs.Fatal, stdout.String(), stderr.String(), obs.ServerStderr)
	}
	if want := []string{"agent_tools_help", "agent_tools_search", "execute_javascript"}; !slices.Equal(sorted(obs.Tools...), want) {
		t.Errorf("code mode lists %v, want %v", obs.Tools, want)
	}

	var combined struct {
		Result struct{ Greeter, Signature, Hello, Loud string }
	}
	if obs.Combined.IsError || json.Unmarshal([]byte(obs.Combined.Text), &combined) != nil {
		t.Fatalf("combining script: isError=%v %s", obs.Combined.IsError, obs.Combined.Text)
	}
	c := combined.Result
	if c.Greeter != "greet" || c.Signature != "greet(args: {name: string}): Promise<any>" || c.Hello != "hello Ada" || c.Loud != "CODE MODE" {
		t.Errorf("combined result %+v", c)
	}

	var denied struct {
		Result struct{ Code, Message string }
	}
	if obs.Denied.IsError || json.Unmarshal([]byte(obs.Denied.Text), &denied) != nil || denied.Result.Code != "UNKNOWN_TOOL" { // hidden: as if it did not exist
		t.Errorf("denied tool in a script: %s", obs.Denied.Text)
	}
	if obs.After.IsError || !strings.Contains(obs.After.Text, `"result":"STILL SERVING"`) {
		t.Errorf("after: %s", obs.After.Text)
	}

	// Audit: the combining script's two calls carry its request id as parent.
	f, err := os.Open(filepath.Join(project, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type rec struct {
		RequestID string `json:"request_id"`
		Parent    string `json:"parent"`
		Tool      string `json:"tool"`
		Outcome   string `json:"outcome"`
		ErrorCode string `json:"error_code"`
	}
	var recs []rec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r rec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	var scripts []rec
	children := map[string][]string{}
	for _, r := range recs {
		if r.Tool == "execute_javascript" {
			scripts = append(scripts, r)
		} else if r.Parent != "" {
			children[r.Parent] = append(children[r.Parent], r.Tool+":"+r.Outcome+r.ErrorCode)
		}
	}
	if len(scripts) != 3 {
		t.Fatalf("audit has %d script records, want 3: %+v", len(scripts), recs)
	}
	first := children[scripts[0].RequestID]
	slices.Sort(first)
	if !slices.Equal(first, []string{"greet:ok", "shout:ok"}) {
		t.Errorf("the combining script's calls in audit: %v (all: %+v)", first, recs)
	}
	if d := children[scripts[1].RequestID]; len(d) != 1 || d[0] != "secret:errorUNKNOWN_TOOL" {
		t.Errorf("the denied call in audit: %v", d)
	}
}
