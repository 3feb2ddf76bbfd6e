package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/tests/testutil"
)

// TestConsoleLinkOnTerminalStdout (issue 49, item 7): on a person's
// terminal serve --http prints the console's login link on stdout, apart
// from the log and audit lines on stderr; elsewhere (a pipe, a service
// manager) on stderr as before.
func TestConsoleLinkOnTerminalStdout(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		env, stdout, stderr := testEnv(t, nil)
		env.StdoutTerminal = terminal
		mustWrite(t, filepath.Join(env.Dir, "agent-tools.yaml"), []byte("local: {enabled: false}\n"), 0o644)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- Run(ctx, env, []string{"serve", "--http", "--addr", "127.0.0.1:0"}) }()
		testutil.WaitFor(t, "the serving line", 10*time.Second, func() bool { return strings.Contains(stderr.String(), "serving MCP") })
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
		}
		link := regexp.MustCompile(`console: open http://\S+/ui/login\?token=[0-9a-f]{64}`)
		on, off := stdout.String(), stderr.String()
		if !terminal {
			on, off = off, on
		}
		if !link.MatchString(on) || link.MatchString(off) {
			t.Errorf("stdout a terminal: %v; want the link on %s only\nstdout:\n%s\nstderr:\n%s", terminal,
				map[bool]string{true: "stdout", false: "stderr"}[terminal], stdout, stderr)
		}
	}
}

// TestCommandLineDocNamesEveryCommand (issue 49, item 7: decisions was
// missing): docs/command-line.md's synopsis has a line for every command.
func TestCommandLineDocNamesEveryCommand(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "command-line.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(raw), "```\n")
	block, _, _ = strings.Cut(block, "```")
	for _, c := range commands() {
		if !regexp.MustCompile(`(?m)^agent-tools ` + regexp.QuoteMeta(c.name) + `\b`).MatchString(block) {
			t.Errorf("docs/command-line.md's synopsis has no line for agent-tools %s (%s)", c.name, c.summary)
		}
	}
}
