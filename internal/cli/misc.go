package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/pins"
	clikind "github.com/agent-tools/agent-tools/internal/provider/cli"
	"github.com/agent-tools/agent-tools/internal/text"
)

func runInit(_ context.Context, env *Env, args []string) int {
	f := newFlags(env, "init", "init [--config FILE] [--force]")
	f.Lookup("config").Usage = "file to write (default ./agent-tools.yaml)"
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
	// Where runtime state goes, so nobody is surprised by a file (or looks
	// for one in the repository).
	dec := decisions.PathFor(path, env.Dir)
	fmt.Fprintf(env.Stdout, "state: pinned tool definitions go to %s (outside the repository)\n"+
		"       \"always allow\" answers, once given, to %s (commit it to share them, or add it to .gitignore)\n",
		pins.PathFor(dec, true, env.LookupEnv), dec)
	fmt.Fprintln(env.Stdout, "secrets: where the config says ${VAR}, a token can stay out of your shell: agent-tools secrets set SERVICE/ACCOUNT, then ${keyring:SERVICE/ACCOUNT}")
	return ExitOK
}

func runConfig(_ context.Context, env *Env, args []string) int {
	const use = "Usage: agent-tools config validate [FILE | --config FILE] [--json]"
	if askedHelp(args) {
		fmt.Fprintln(env.Stdout, use)
		return ExitOK
	}
	if len(args) == 0 || args[0] != "validate" {
		fmt.Fprintln(env.Stderr, use)
		return ExitUsage
	}
	f := newFlags(env, "config validate", "config validate [FILE | --config FILE] [--json]").withJSON()
	pos, ok := f.parse(args[1:])
	if !ok {
		return ExitUsage
	}
	switch {
	case len(pos) == 1 && f.config == "":
		f.config = pos[0] // `config validate other.yaml`, as people type it
	case len(pos) > 0:
		msg := fmt.Sprintf("config validate takes one config file (FILE or --config FILE), got %q", strings.Join(pos, " "))
		if f.json { // --json: the answer on stdout, as JSON, and nothing on stderr
			writeJSON(env.Stdout, map[string]any{"ok": false, "error": msg})
		} else {
			fmt.Fprintln(env.Stderr, "agent-tools:", msg)
		}
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
	// Providers as doctor and help count them: local (the repository's
	// scripts) when enabled, then every enabled entry.
	var ids []string
	if cfg.Local.Enabled {
		ids = append(ids, "local")
	}
	for _, p := range cfg.Providers {
		if p.Enabled {
			ids = append(ids, p.ID)
		}
	}
	warnings, notes := toolNameChecks(cfg)
	if f.json {
		if ids == nil {
			ids = []string{}
		}
		out := map[string]any{"ok": true, "config": cfg.Path, "providers": len(ids), "providerIds": ids}
		if len(warnings) > 0 {
			out["warnings"] = warnings
		}
		if len(notes) > 0 {
			out["notes"] = notes
		}
		return writeJSON(env.Stdout, out)
	}
	if cfg.Path == "" {
		fmt.Fprintln(env.Stdout, "no agent-tools.yaml here: zero-config applies (./.agents/tools and the built-ins)")
		return ExitOK
	}
	list := ""
	if len(ids) > 0 {
		list = ": " + strings.Join(ids, ", ")
	}
	fmt.Fprintf(env.Stdout, "%s: ok (mode %s, %s%s)\n", cfg.Path, cfg.Mode, plural(len(ids), "provider", "providers"), list)
	for _, w := range warnings {
		fmt.Fprintf(env.Stdout, "%s:%d:%d: warning: %s\n", w.File, w.Line, w.Col, w.Message)
	}
	for _, n := range notes {
		fmt.Fprintln(env.Stdout, "note:", n)
	}
	return ExitOK
}

// plural is "1 provider" or "n providers".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// toolNameChecks checks the tool names that overrides and rename use
// where the tool list is in the config (kind cli): a name that is not one
// of the provider's tools is a warning. Elsewhere the list is the
// upstream's, known once it starts: a note says doctor checks them then.
func toolNameChecks(cfg *config.Config) (warnings []configError, notes []string) {
	for i, p := range cfg.Providers {
		if !p.Enabled || len(p.Overrides)+len(p.Rename) == 0 {
			continue
		}
		spec, static := p.Spec.(*clikind.Spec)
		if !static {
			notes = append(notes, fmt.Sprintf("provider %q (kind %s): the tool names under overrides/rename are checked at start, when its tools are known (agent-tools doctor)", p.ID, p.Kind))
			continue
		}
		var have []string
		for _, t := range spec.Tools {
			have = append(have, t.Name)
		}
		for _, key := range []string{"overrides", "rename"} {
			var names []string
			if key == "overrides" {
				for n := range p.Overrides {
					names = append(names, n)
				}
			} else {
				for n := range p.Rename {
					names = append(names, n)
				}
			}
			slices.Sort(names)
			for _, n := range names {
				if slices.Contains(have, n) {
					continue
				}
				path := fmt.Sprintf("providers[%d].%s.%s", i, key, n)
				pos, ok := cfg.KeyPos(path)
				if !ok {
					pos = p.Pos
				}
				msg := fmt.Sprintf("%s names %q, which is not a tool of provider %q (its tools: %s)", key, n, p.ID, strings.Join(have, ", "))
				if did := text.Suggest(n, have); did != "" {
					msg += fmt.Sprintf("; did you mean %q?", did)
				}
				warnings = append(warnings, configError{File: cfg.Path, Line: pos.Line, Col: pos.Col, Path: path, Message: msg})
			}
		}
	}
	return warnings, notes
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
	f := newBareFlags(env, "version", "version [--json]").withJSON()
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		return ExitUsage
	}
	if f.json {
		return writeJSON(env.Stdout, map[string]string{"version": app.Version(), "go": runtime.Version()})
	}
	fmt.Fprintf(env.Stdout, "agent-tools %s (%s)\n", app.Version(), runtime.Version())
	return ExitOK
}
