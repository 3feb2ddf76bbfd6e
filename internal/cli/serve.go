package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/transport"
)

func runServe(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "serve", "serve [--config FILE] [--mode progressive|search|flat|text]").withMode()
	if _, ok := f.parse(args); !ok {
		return ExitUsage
	}
	a, code := load(ctx, env, f, slog.LevelInfo, env.Stderr)
	if a == nil {
		return code
	}
	defer a.Close()
	if isTerminal(env.Stdin) {
		banner(env.Stderr, string(a.Mode), a.Config.Path, len(a.Facade.Tools()))
	}
	err := a.Facade.Server().Run(ctx, transport.Stdio(env.Stdin, env.Stdout, drainOnEOF))
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		fmt.Fprintln(env.Stderr, "agent-tools: serve:", err)
		return ExitFailed
	}
	return ExitOK
}

// drainOnEOF bounds how long serve keeps answering after the client closed stdin.
const drainOnEOF = 30 * time.Second

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// banner tells a person who ran serve by hand what is going on; an MCP client
// never sees it (stdin is then a pipe, and stdout carries only protocol).
func banner(w io.Writer, mode, cfg string, tools int) {
	if cfg == "" {
		cfg = "none (zero-config: ./.agents/tools and the built-ins)"
	}
	fmt.Fprintf(w, strings.TrimLeft(`
agent-tools is serving MCP over stdio (mode %s, config %s, %d MCP tools).
It speaks JSON-RPC on stdin/stdout and is meant to be started by an MCP client:
  Claude Code:  claude mcp add agent-tools -- agent-tools serve
  .mcp.json:    {"mcpServers": {"agent-tools": {"command": "agent-tools", "args": ["serve"]}}}
Press Ctrl-C to stop.
`, "\n"), mode, cfg, tools)
}
