//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTTPClients: the TypeScript SDK and the Inspector CLI list and call
// tools over Streamable HTTP, without auth on loopback and with a bearer
// token from the environment.
func TestHTTPClients(t *testing.T) {
	requirePeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()

	t.Run("no auth", func(t *testing.T) {
		project := newProject(t)
		url := startHTTP(ctx, t, project)
		obs := runTSWith(t, "progressive", nil, "-", url)
		assertToolSet(t, obs.toolNames(), "agent_tools_help", "agent_tools_local_discover", "agent_tools_local_call",
			"agent_tools_builtin_discover", "agent_tools_builtin_call")
		assertGreet(t, obs.step(t, "greet"), "Ada Lovelace ☃")
		assertEnvelope(t, "touchNoConfirm", obs.step(t, "touchNoConfirm"), "CONFIRMATION_REQUIRED")
		assertFile(t, project, "progressive-confirmed.txt", true)

		list := inspectorAt(t, project, url, "--transport", "http", "--method", "tools/list")
		if names := inspectorToolNames(t, list); !strings.Contains(strings.Join(names, ","), "agent_tools_local_call") {
			t.Fatalf("inspector over HTTP: tools = %v", names)
		}
		out := inspectorAt(t, project, url, "--transport", "http", "--method", "tools/call",
			"--tool-name", "agent_tools_local_call", "--tool-arg", "toolName=greet", "--tool-arg", `arguments={"name":"Inspector"}`)
		if text, isErr := inspectorText(t, out); isErr || !strings.Contains(text, "Inspector") {
			t.Fatalf("inspector call over HTTP: %q (isError %v)", text, isErr)
		}
	})

	t.Run("bearer token", func(t *testing.T) {
		project := newProject(t)
		cfg := "server:\n  http:\n    tokens: [\"${INTEROP_TOKEN}\"]\n"
		if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		url := startHTTP(ctx, t, project, "INTEROP_TOKEN=s3cret-interop")
		obs := runTSWith(t, "progressive", []string{"INTEROP_BEARER=s3cret-interop"}, "-", url)
		assertGreet(t, obs.step(t, "greet"), "Ada Lovelace ☃")

		// A wrong token: the handshake itself is refused (401 invalid_token).
		denied := runTSFatal(t, "progressive", []string{"INTEROP_BEARER=wrong"}, "-", url)
		if !strings.Contains(denied, "invalid_token") {
			t.Fatalf("a wrong token was not refused: %s", denied)
		}
	})
}

// runTSFatal runs a scenario that must fail and returns its "fatal" message.
func runTSFatal(t *testing.T, scenario string, env []string, target ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	cmd := peerCommand(ctx, interopDir, "node", append([]string{filepath.Join(interopDir, "ts-client.mjs"), scenario}, target...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err == nil {
		t.Fatalf("ts-client %s succeeded, want a failure: %s", scenario, out)
	}
	var obs observation
	if jerr := json.Unmarshal(lastLine(out), &obs); jerr != nil || obs.Fatal == "" {
		t.Fatalf("ts-client %s: no fatal message (%v): %s", scenario, jerr, out)
	}
	return obs.Fatal
}

// tsNewestVersion is the newest protocol version of the pinned TypeScript
// SDK (its LATEST_PROTOCOL_VERSION): the TS client speaks it on every
// endpoint. It has no 2026-07-28 yet; the go-sdk client covers that
// (internal/transport's TestProtocolVersionByEndpoint, docs/protocol.md).
const tsNewestVersion = "2025-11-25"

// TestTSSDKEveryEndpoint: the TypeScript SDK client, in the newest version
// it speaks, on the default /mcp, a profile's /mcp/p/<slug> and a
// --stateless /mcp of servers that also serve 2026-07-28 per request:
// handshake, list, call, confirmation, with a session exactly where the
// endpoint keeps sessions.
func TestTSSDKEveryEndpoint(t *testing.T) {
	requirePeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	profiles := "profiles:\n  ops:\n    mode: progressive\n"
	for _, tc := range []struct {
		name, config, path string
		session            bool
	}{
		{"default", "", "", true},
		{"profile", profiles, "/p/ops", true},
		{"stateless", "server:\n  http:\n    stateless: true\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := newProject(t)
			if tc.config != "" {
				if err := os.WriteFile(filepath.Join(project, "agent-tools.yaml"), []byte(tc.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			url := startHTTP(ctx, t, project) + tc.path
			obs := runTSWith(t, "progressive", nil, "-", url)
			if obs.ProtocolVersion != tsNewestVersion {
				t.Errorf("protocol version %q, want the TS SDK's newest %s", obs.ProtocolVersion, tsNewestVersion)
			}
			if (obs.SessionID != "") != tc.session {
				t.Errorf("session id %q on %s", obs.SessionID, tc.name)
			}
			if !obs.Pinged {
				t.Error("no ping")
			}
			assertToolSet(t, obs.toolNames(), "agent_tools_help", "agent_tools_local_discover", "agent_tools_local_call",
				"agent_tools_builtin_discover", "agent_tools_builtin_call")
			assertGreet(t, obs.step(t, "greet"), "Ada Lovelace ☃")
			assertEnvelope(t, "touchNoConfirm", obs.step(t, "touchNoConfirm"), "CONFIRMATION_REQUIRED")
		})
	}
}
