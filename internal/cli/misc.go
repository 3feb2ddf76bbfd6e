package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/config"
)

func runInit(_ context.Context, env *Env, args []string) int {
	f := newFlags(env, "init", "init [--force]")
	force := f.Bool("force", false, "overwrite an existing agent-tools.yaml")
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		return ExitUsage
	}
	path := f.configPath(env)
	if path == "" {
		path = filepath.Join(env.Dir, config.FileName)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	file, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fmt.Fprintf(env.Stderr, "agent-tools: %s already exists (use --force to overwrite)\n", path)
		return ExitFailed
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	_, err = file.WriteString(config.Starter())
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	fmt.Fprintf(env.Stdout, "wrote %s\nnext: put executable scripts in .agents/tools/ or uncomment a provider example (mcp, openapi, cli, workers), then run 'agent-tools doctor'\n", path)
	fmt.Fprintln(env.Stdout, "secrets: where the config says ${VAR}, a token can stay out of your shell: agent-tools secrets set SERVICE/ACCOUNT, then ${keyring:SERVICE/ACCOUNT}")
	return ExitOK
}

func runConfig(_ context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] != "validate" {
		fmt.Fprintln(env.Stderr, "Usage: agent-tools config validate [--config FILE] [--json]")
		return ExitUsage
	}
	f := newFlags(env, "config validate", "config validate [--config FILE] [--json]").withJSON()
	if pos, ok := f.parse(args[1:]); !ok || len(pos) > 0 {
		return ExitUsage
	}
	cfg, err := app.LoadConfig(app.Options{ConfigPath: f.configPath(env), ProjectDir: env.Dir, Env: env.LookupEnv})
	if err != nil {
		if f.json {
			out := map[string]any{"ok": false, "error": err.Error()}
			if errs, ok := config.AsErrors(err); ok {
				out["errors"] = configErrors(errs.List)
			}
			writeJSON(env.Stdout, out)
		} else {
			fmt.Fprintln(env.Stderr, errorText(err))
		}
		return ExitUsage
	}
	if f.json {
		return writeJSON(env.Stdout, map[string]any{"ok": true, "config": cfg.Path, "providers": len(cfg.Providers)})
	}
	if cfg.Path == "" {
		fmt.Fprintln(env.Stdout, "no agent-tools.yaml here: zero-config applies (./.agents/tools and the built-ins)")
		return ExitOK
	}
	noun := "providers"
	if len(cfg.Providers) == 1 {
		noun = "provider"
	}
	fmt.Fprintf(env.Stdout, "%s: ok (mode %s, %d %s)\n", cfg.Path, cfg.Mode, len(cfg.Providers), noun)
	return ExitOK
}

// configError is one config error in --json output, with lowercase keys
// like everything else the CLI prints as JSON.
type configError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

func configErrors(list []config.Error) []configError {
	out := make([]configError, len(list))
	for i, e := range list {
		out[i] = configError{File: e.File, Line: e.Line, Col: e.Col, Path: e.Path, Message: e.Msg}
	}
	return out
}

func runVersion(_ context.Context, env *Env, args []string) int {
	f := newFlags(env, "version", "version [--json]").withJSON()
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		return ExitUsage
	}
	if f.json {
		return writeJSON(env.Stdout, map[string]string{"version": app.Version(), "go": runtime.Version()})
	}
	fmt.Fprintf(env.Stdout, "agent-tools %s (%s)\n", app.Version(), runtime.Version())
	return ExitOK
}
