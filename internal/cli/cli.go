// Package cli is the agent-tools command line: one file per subcommand, human
// output by default and --json for scripts. Exit status: 0 success, 1 the tool
// or command failed, 2 usage or configuration error.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/runtime"
)

// Exit statuses: 1 when a command failed, 2 when it was misused (a bad
// flag or config), as scripts and CI expect.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// Env is what a command may touch of the outside world.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv looks up environment variables (for ${VAR} and defaults).
	LookupEnv func(string) (string, bool)
	// Dir is the working directory (the project served).
	Dir string
	// Progress shows a running call's progress on Stderr (Main: when
	// stderr is a terminal), every ProgressEvery (0: 2s, as MCP clients get it).
	Progress      bool
	ProgressEvery time.Duration
	// StartWait bounds how long doctor, list and search wait for a
	// provider that is still starting (0: app.DefaultStartWait).
	StartWait time.Duration
	// StdoutTerminal: stdout is a person's terminal (Main), where serve
	// --http prints the console's login link, apart from the log on stderr.
	StdoutTerminal bool

	// helped is set once a command printed its usage for -h/--help:
	// asking for help succeeds (Run returns 0).
	helped bool
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
}

func commands() []command {
	return []command{
		{"serve", "serve the tools over MCP (stdio by default)", runServe},
		{"list", "list every tool: canonical name, provider, read-only?, description", runList},
		{"search", "rank tools for a query", runSearch},
		{"call", "call one tool by its canonical name", runCall},
		{"doctor", "check every provider and script: ok / skipped / failed, and why", runDoctor},
		{"init", "write a commented starter agent-tools.yaml", runInit},
		{"auth", "auth login|status|logout: logins of upstreams that need one (OAuth)", runAuth},
		{"decisions", "decisions list|revoke NAME|clear: remembered \"always allow\" answers", runDecisions},
		{"pins", "pins list|approve NAME: pinned tool definitions and the upstream changes to approve", runPins},
		{"secrets", "secrets set|get --reveal|list|rm SERVICE/ACCOUNT: secrets in the OS keyring, for ${keyring:…}", runSecrets},
		{"registry", "registry search|show|add|approve|outdated|upgrade: MCP servers from the official (or a private) registry", runRegistry},
		{"config", "config validate: check agent-tools.yaml and explain every error", runConfig},
		{"stats", "top tools (or identities) by result tokens, calls, errors, p50/p99 duration, from the audit log", runStats},
		{"version", "print the version", runVersion},
	}
}

// Main runs the command line and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, ok := scriptChild(args, stdin, stdout); ok { // jsrun.go
		return code
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "agent-tools:", err)
		return ExitFailed
	}
	return Run(ctx, &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, LookupEnv: os.LookupEnv, Dir: wd,
		Progress: stderr == io.Writer(os.Stderr) && isTerminal(os.Stderr), StdoutTerminal: stdout == io.Writer(os.Stdout) && isTerminal(os.Stdout)}, args)
}

// Run is Main with an explicit environment (tests use it).
func Run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	// Everything a command prints (doctor, list, call, logs, errors) goes
	// through the redactor: no secret the config interpolated can reach a
	// terminal or a log collector, whichever code path formatted it.
	scrubbed := *env
	scrubbed.Stdout, scrubbed.Stderr = redact.Default.Writer(env.Stdout), redact.Default.Writer(env.Stderr)
	env = &scrubbed
	args = hoistGlobalFlags(args)
	for _, c := range commands() {
		if c.name == args[0] {
			code := c.run(ctx, env, args[1:])
			if env.helped {
				return ExitOK
			}
			return code
		}
	}
	fmt.Fprintf(env.Stderr, "agent-tools: unknown command %q\n\n", args[0])
	usage(env.Stderr)
	return ExitUsage
}

// globalValueFlags are the flags every loading command shares that take a
// value; with globalBoolFlags they may come before the command name.
var (
	globalValueFlags = map[string]bool{"config": true, "mode": true}
	globalBoolFlags  = map[string]bool{"json": true}
)

// hoistGlobalFlags moves the shared flags written before the command name
// (`agent-tools --config x.yaml doctor`, the form people type) behind the
// command's own arguments, where its FlagSet parses them. Anything else
// before the name is left in place, so the command is still reported as
// unknown.
func hoistGlobalFlags(args []string) []string {
	var lead []string
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		switch {
		case globalValueFlags[name] && !hasValue && i+1 < len(args):
			lead = append(lead, args[i], args[i+1])
			i += 2
		case globalValueFlags[name] && hasValue, globalBoolFlags[name]:
			lead = append(lead, args[i])
			i++
		default:
			return args
		}
	}
	if len(lead) == 0 || i == len(args) {
		return args
	}
	return append(append([]string{}, args[i:]...), lead...)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "agent-tools: one MCP server for every tool your team already has.")
	fmt.Fprintln(w, "\nUsage: agent-tools <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\n--config FILE, --mode MODE and --json may also come before the command.")
	fmt.Fprintln(w, "Run 'agent-tools <command> -h' for a command's flags.")
}

// flags is a FlagSet with the options most commands share. Its usage
// lists exactly the flags the command (or the family member named by the
// first argument, see verb) defines, is printed once per parse, and on
// -h/--help goes to stdout with exit status 0 (Run turns the command's
// status into 0 once help was asked for).
type flags struct {
	*flag.FlagSet
	env       *Env
	usageLine string
	verbs     map[string]verbUsage
	pos       []string // positional arguments parsed so far: pos[0] picks a verb's usage
	parsing   bool     // inside Parse: the flag package's own call to Usage is ours to make
	printed   bool     // usage already printed
	config    string
	json      bool
	mode      string
	profile   string // serve --profile
}

// verbUsage is the usage of one member of a family (pins list, decisions
// revoke): its line and the flags it reads (nil: every flag).
type verbUsage struct {
	line  string
	flags []string
}

// newFlags is the FlagSet of a command that reads the config (--config).
func newFlags(env *Env, name, usageLine string) *flags {
	f := newBareFlags(env, name, usageLine)
	f.StringVar(&f.config, "config", "", "config file (default ./agent-tools.yaml when present, else zero-config)")
	return f
}

// newBareFlags is the FlagSet of a command that reads no config (version).
func newBareFlags(env *Env, name, usageLine string) *flags {
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), env: env, usageLine: usageLine}
	f.SetOutput(env.Stderr)
	f.Usage = func() {
		if !f.parsing {
			f.printUsage(env.Stderr)
		}
	}
	return f
}

// verb declares the usage of the family member named verb: its line and
// the flags it reads, shown by `<command> <verb> --help` instead of the
// family's.
func (f *flags) verb(verb, usageLine string, flagNames ...string) *flags {
	if f.verbs == nil {
		f.verbs = map[string]verbUsage{}
	}
	f.verbs[verb] = verbUsage{usageLine, flagNames}
	return f
}

// printUsage prints the usage line and the flags once.
func (f *flags) printUsage(w io.Writer) {
	if f.printed {
		return
	}
	f.printed = true
	line, names := f.usageLine, []string(nil)
	if len(f.pos) > 0 {
		if v, ok := f.verbs[f.pos[0]]; ok {
			line, names = v.line, v.flags
		}
	}
	fmt.Fprintf(w, "Usage: agent-tools %s\n", line)
	own := flag.NewFlagSet(f.Name(), flag.ContinueOnError)
	f.VisitAll(func(fl *flag.Flag) {
		if names == nil || slices.Contains(names, fl.Name) {
			own.Var(fl.Value, fl.Name, fl.Usage)
			own.Lookup(fl.Name).DefValue = fl.DefValue
		}
	})
	if !hasFlags(own) {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	own.SetOutput(w)
	own.PrintDefaults()
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// configPath is --config, a relative path taken from the project directory
// (the working directory of the real command; Env.Dir for Run).
func (f *flags) configPath(env *Env) string {
	if f.config == "" || filepath.IsAbs(f.config) {
		return f.config
	}
	return filepath.Join(env.Dir, f.config)
}

func (f *flags) withJSON() *flags {
	f.BoolVar(&f.json, "json", false, "machine-readable output")
	return f
}

func (f *flags) withMode() *flags {
	f.StringVar(&f.mode, "mode", "", "exposure mode: progressive, search, flat, text or code (overrides the config)")
	return f
}

// parse accepts flags before and after positional arguments. On -h/--help
// it prints the usage on stdout and reports false; the command's usage
// status is then turned into 0 by Run. On a bad flag the flag package has
// said what is wrong and the usage follows on stderr.
func (f *flags) parse(args []string) ([]string, bool) {
	var pos []string
	for {
		f.pos = pos
		f.parsing = true
		err := f.Parse(args)
		f.parsing = false
		if errors.Is(err, flag.ErrHelp) {
			f.printUsage(f.env.Stdout)
			f.env.helped = true
			return nil, false
		}
		if err != nil {
			f.printUsage(f.env.Stderr)
			return nil, false
		}
		args = f.Args()
		if len(args) == 0 {
			return pos, true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// askedHelp reports whether args is exactly a request for help (-h,
// -help, --help), for the families that dispatch before parsing flags.
func askedHelp(args []string) bool {
	return len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

// load builds the runtime for a command, logging to stderr; the audit log
// goes to audit (nil: off unless the config names a file) and mw runs in every
// call's pipeline.
func load(ctx context.Context, env *Env, f *flags, log *slog.Logger, audit io.Writer, mw ...pipeline.Middleware) (*app.App, int) {
	rt, code := loadRuntime(ctx, env, f, log, audit, nil, mw...)
	if rt == nil {
		return nil, code
	}
	return rt.App(), ExitOK
}

// loadRuntime is load returning the public Runtime (serve uses it), with
// the tracer that records every call (nil: none).
func loadRuntime(ctx context.Context, env *Env, f *flags, log *slog.Logger, audit io.Writer, tracer pipeline.Tracer, mw ...pipeline.Middleware) (*runtime.Runtime, int) {
	if audit == nil {
		audit = io.Discard
	}
	// The binary runs the engine the public embedding package is a veneer
	// over, with what only it needs: the project's config lookup, its
	// middleware and tracer, its stdio streams and a profile.
	rt, err := runtime.New(runtime.Options{
		ConfigFile: f.configPath(env), ProjectDir: env.Dir, Mode: f.mode, LookupEnv: env.LookupEnv, Logger: log, AuditLog: audit,
		Middleware: mw, Tracer: tracer, FindConfig: true, Stdin: env.Stdin, Stdout: env.Stdout, Profile: f.profile,
	})
	if err == nil {
		err = rt.Start(ctx)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", errorText(err))
		var ce *app.ConfigError
		if errors.As(err, &ce) {
			return nil, ExitUsage
		}
		return nil, ExitFailed
	}
	return rt, ExitOK
}

// stderrLog is the commands' structured log on stderr.
func stderrLog(env *Env, level slog.Level) *slog.Logger {
	return slog.New(redact.Default.Handler(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})))
}

// errorText prints config errors one per line.
func errorText(err error) string {
	if errs, ok := config.AsErrors(err); ok {
		return "configuration errors:\n" + strings.TrimRight(errs.Error(), "\n")
	}
	return err.Error()
}
