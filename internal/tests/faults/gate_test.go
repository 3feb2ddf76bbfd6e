package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gate's hostile cases, against the real `serve --http` (code mode,
// named bearer tokens, a per-identity rule, a profile): each is a side door
// a review found open, asked through the one access decision now.
//   - a read-only script runs a mutating tool that was written to
//     .agents/tools after the server started (the lookup missed, the call
//     went through): refused on the resolved tool, every time;
//   - a hidden tool called with wrong arguments answers as a tool that does
//     not exist, without its schema;
//   - a token a rule restricts is no console operator;
//   - an 8 Mi-character name comes back clipped;
//   - a profile whose tools are an allow list still runs the mode's
//     interpreter, and its scripts see only the profile's tools.
func TestGateHostile(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh for the script cases")
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, ".agents", "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(tools, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("probe", "#!/bin/sh\n# @description Print a line.\n# @readonly\necho probe-ok\n")
	write("secret", "#!/bin/sh\n# @description Read the team's secret notes.\n# @readonly\n# @param *topic string What the notes are about\necho notes\n")
	p := &project{dir: dir, config: filepath.Join(dir, "agent-tools.yaml"), audit: filepath.Join(dir, "audit.jsonl")}
	const alice, admin = "faults-gate-alice-token-0123456789", "faults-gate-admin-token-0123456789"
	t.Setenv("FAULTS_GATE_ALICE", alice)
	t.Setenv("FAULTS_GATE_ADMIN", admin)
	// code.memory is raised for the huge-name case: the race detector
	// multiplies a script's memory, and this test is about the answer's
	// size, not the script's limit (the hostile scripts' suite is).
	cfg := fmt.Sprintf(`mode: code
code:
  memory: 2GiB
local:
  requireConfirm: true
server:
  http:
    tokens:
      - {name: alice, token: "${FAULTS_GATE_ALICE}"}
      - {name: admin, token: "${FAULTS_GATE_ADMIN}"}
    rateLimit: {off: true}
policy:
  rules:
    - identities: ["token:alice"]
      deny: ["secret"]
profiles:
  ro:
    tools: {allow: ["probe"]}
audit:
  path: %q
`, p.audit)
	if err := os.WriteFile(p.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url, _, stop := serveHTTP(t, p)
	defer stop()
	connect := func(endpoint, token string) *sdk.ClientSession {
		t.Helper()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "gate", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	script := func(cs *sdk.ClientSession, code string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "execute_javascript", Arguments: map[string]any{"code": code}})
		if err != nil {
			t.Fatalf("execute_javascript: %v", err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	adminS, aliceS := connect(url, admin), connect(url, alice)

	// A mutating script written after the start, called by a read-only script.
	marker := filepath.Join(dir, "dropped")
	write("drop_table", "#!/bin/sh\n# @description Drop a table.\ntouch "+marker+"\necho dropped\n")
	out, _ := script(adminS, `const codes = [];
		for (let i = 0; i < 2; i++) { try { await tools.call("drop_table", {}, {confirm: true}); codes.push("RAN") } catch (e) { codes.push(e.code) } }
		return codes`)
	if !strings.Contains(out, `["DENIED","DENIED"]`) {
		t.Errorf("read-only script and a fresh mutating tool: %s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a read-only script ran a mutation")
	}

	// A hidden tool with wrong arguments: unknown, no schema.
	out, _ = script(aliceS, `try { await tools.call("secret", {wrong: 1}) } catch (e) { return [e.code, e.expected_schema === undefined, JSON.stringify(e.did_you_mean || [])] }`)
	if !strings.Contains(out, `["UNKNOWN_TOOL",true,"[]"]`) {
		t.Errorf("alice calling a tool hidden from her: %s", out)
	}
	out, _ = script(adminS, `try { await tools.call("secret", {wrong: 1}) } catch (e) { return [e.code, e.expected_schema !== undefined] }`)
	if !strings.Contains(out, `["INVALID_ARGUMENTS",true]`) {
		t.Errorf("admin calling it with wrong arguments: %s", out)
	}

	// An 8 Mi-character name.
	out, _ = script(adminS, `try { await tools.call("x".repeat(8 << 20), {}) } catch (e) { return [e.code, e.message.length] }`)
	if len(out) > 4096 || !strings.Contains(out, "UNKNOWN_TOOL") {
		t.Errorf("huge name: %d bytes: %.300s", len(out), out)
	}

	// The console: alice is no operator, admin is.
	base := strings.TrimSuffix(url, "/mcp")
	for _, path := range []string{"/ui/api/providers", "/ui/api/tools", "/ui/api/approvals"} {
		for _, who := range []struct {
			token string
			want  int
		}{{alice, http.StatusForbidden}, {admin, http.StatusOK}} {
			res, err := (&http.Client{Transport: bearer{who.token}}).Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != who.want {
				t.Errorf("GET %s: %d, want %d", path, res.StatusCode, who.want)
			}
		}
	}

	// A code-mode profile with an allow list: the interpreter runs, and
	// its scripts see the profile's tools only.
	roS := connect(base+"/mcp/p/ro", admin)
	out, isErr := script(roS, `const names = tools.search("print a line drop a table secret notes", {limit: 20}).map(t => t.name);
		let denied; try { await tools.call("secret", {topic: "x"}) } catch (e) { denied = e.code }
		return [await tools.call("probe", {}), names.includes("secret"), denied]`)
	if isErr || !strings.Contains(out, `"probe-ok`) || !strings.Contains(out, `false,"UNKNOWN_TOOL"]`) {
		t.Errorf("code mode through a profile: %v %s", isErr, out)
	}

	stop()
	audit, _ := os.ReadFile(p.audit)
	var profiled bool
	for _, line := range strings.Split(strings.TrimSpace(string(audit)), "\n") {
		var rec struct{ Profile, Tool string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Profile == "ro" && rec.Tool == "probe" {
			profiled = true
		}
	}
	if !profiled {
		t.Error("the audit does not name the profile of the profile's calls")
	}
	record("gate: side doors (read-only scripts, hidden schemas, console operators, huge names, code-mode profiles)", 1, "all refused the one way")
}
