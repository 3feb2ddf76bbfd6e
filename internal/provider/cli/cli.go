// Package cli is provider kind cli: allowlisted executables run from argv
// templates (docs/providers/cli.md). A call expands the tool's template with the
// arguments (package argv: one value is one argument, never through a
// shell), runs the program with internal/proc (process group, deadline with
// SIGTERM then SIGKILL, bounded output) in a minimal environment, and shapes
// the result exactly as local scripts do (proc.Shape).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/cli/argv"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// DefaultTimeout bounds a call when neither the tool nor the provider sets
// a deadline (the runtime's default too).
const DefaultTimeout = 60 * time.Second

var (
	_ provider.Provider          = (*Provider)(nil)
	_ provider.Diagnoser         = (*Provider)(nil)
	_ provider.ArgumentValidator = (*Provider)(nil)
)

// Options configure a Provider; Build fills them from a config entry.
type Options struct {
	// Header is the entry's id, description, confirmation, per-call
	// deadline (0 = DefaultTimeout) and the tools that never need
	// confirmation (besides the tools' own readonly: true).
	provider.Header
	// Spec is the kind's part of the entry (tools, allow, env, cwd).
	Spec *Spec
	// BaseDir resolves relative program paths and a missing Spec.Root/Cwd
	// (the config's directory).
	BaseDir string
	// Environ is the host environment the child's minimal one is taken
	// from (nil = os.Environ).
	Environ func() []string
	// MaxOutput bounds each of stdout and stderr (0 = proc.DefaultMaxOutput).
	MaxOutput int
	// ProbeTimeout bounds doctor's `--version` probe (0 = 3s).
	ProbeTimeout time.Duration
	Logger       *slog.Logger
}

// Provider runs the tools of one cli entry. It is safe for concurrent use.
type Provider struct {
	opts   Options
	log    *slog.Logger
	env    []string
	root   string
	tools  []*tool
	byName map[string]*tool

	mu       sync.Mutex
	programs map[string]*program // by argv[0] as the config spells it
}

type tool struct {
	cat     catalog.Tool
	tmpl    *argv.Template
	params  map[string]argv.Param
	program string
	dir     string
	timeout time.Duration
}

// program is one allowed executable and where it was found.
type program struct {
	path string // absolute; "" when not found
	err  error
}

// Build is kind cli's entry in the runtime's table of provider kinds. It
// resolves the allowed programs (a missing one is reported by doctor and at
// call time, not here) and runs nothing.
func Build(h provider.Header, s config.Spec, deps provider.Deps) (provider.Provider, error) {
	spec, ok := s.(*Spec)
	if !ok {
		return nil, fmt.Errorf("provider %q: not a cli entry", h.ID)
	}
	// Relative program paths mean the declaring file's directory (a
	// plugin's own directory for a plugin).
	base := firstNonEmpty(spec.Root, deps.ConfigDir, deps.ProjectDir)
	return New(Options{Header: h, Spec: spec, BaseDir: base, Logger: deps.Log})
}

// New builds a provider from opts. The templates are parsed again (a
// config built in code may not have been validated); a bad one is an error.
func New(opts Options) (*Provider, error) {
	if opts.Spec == nil {
		return nil, errors.New("cli: no spec")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = 3 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	spec := opts.Spec
	root := firstNonEmpty(spec.Root, opts.BaseDir)
	if opts.BaseDir == "" {
		opts.BaseDir = root
	}
	p := &Provider{
		opts:     opts,
		log:      log,
		env:      minimalEnv(opts.Environ(), spec.Env),
		root:     root,
		byName:   map[string]*tool{},
		programs: map[string]*program{},
	}
	allowed := spec.Programs()
	for _, t := range spec.Tools {
		tl, err := p.buildTool(t, allowed)
		if err != nil {
			return nil, fmt.Errorf("cli provider %q: tool %q: %w", opts.ID, t.Name, err)
		}
		if _, dup := p.byName[t.Name]; dup {
			return nil, fmt.Errorf("cli provider %q: duplicate tool %q", opts.ID, t.Name)
		}
		p.tools = append(p.tools, tl)
		p.byName[t.Name] = tl
	}
	sort.Slice(p.tools, func(i, j int) bool { return p.tools[i].cat.Name < p.tools[j].cat.Name })
	for _, name := range allowed {
		pr := p.lookup(name)
		if pr.err != nil {
			p.log.Warn("cli program not found", "program", name, "err", pr.err)
		}
		p.programs[name] = pr
	}
	return p, nil
}

func (p *Provider) buildTool(t Tool, allowed []string) (*tool, error) {
	if len(t.Argv) == 0 || t.Argv[0] == "" {
		return nil, errors.New("argv needs at least the program")
	}
	if !slices.Contains(allowed, t.Argv[0]) {
		return nil, fmt.Errorf("program %q is not in the allow list", t.Argv[0])
	}
	tmpl, err := argv.Parse(t.Argv)
	if err != nil {
		return nil, err
	}
	params := make(map[string]argv.Param, len(t.Params))
	for name, cp := range t.Params {
		def, err := argv.Normalize(cp.Default)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: default: %w", name, err)
		}
		items := cp.Items
		if cp.Type == "array" && items == "" {
			items = "string"
		}
		params[name] = argv.Param{Type: cp.Type, Items: items, Required: cp.Required, Default: def}
	}
	if probs := tmpl.Check(params); len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, pr := range probs {
			msgs[i] = fmt.Sprintf("argv[%d]: %s", pr.Index, pr.Msg)
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	unused := tmpl.Unused(params)
	sort.Strings(unused)
	for _, name := range unused {
		p.log.Warn("cli tool parameter is not used in argv: a model may pass it, and it changes nothing", "tool", t.Name, "param", name)
	}
	schema, err := inputSchema(t.Params, params, tmpl.OptionSensitive())
	if err != nil {
		return nil, err
	}
	timeout := t.Timeout.Duration
	desc := t.Description
	if desc == "" {
		desc = fmt.Sprintf("Runs %s.", filepath.Base(t.Argv[0]))
	}
	return &tool{
		cat: catalog.Tool{
			Provider:    p.opts.ID,
			Name:        t.Name,
			Description: desc,
			InputSchema: schema,
			ReadOnly:    t.ReadOnly || slices.Contains(p.opts.ReadOnly, t.Name),
			Timeout:     timeout,
		},
		tmpl:    tmpl,
		params:  params,
		program: t.Argv[0],
		dir:     firstNonEmpty(t.Cwd, p.opts.Spec.Cwd, p.root),
		timeout: cmp(timeout, p.opts.Timeout),
	}, nil
}

func cmp(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Info describes the provider.
func (p *Provider) Info() catalog.ProviderInfo {
	desc := p.opts.Description
	if desc == "" {
		var names []string
		for _, n := range p.opts.Spec.Programs() {
			names = append(names, filepath.Base(n))
		}
		desc = "Command-line programs: " + strings.Join(names, ", ")
	}
	return catalog.ProviderInfo{
		ID: p.opts.ID, Kind: Name, Description: desc, DiscoverHint: p.opts.DiscoverHint,
		RequireConfirm: p.opts.RequireConfirm, Timeout: p.opts.Timeout,
	}
}

// Tools lists the configured tools, sorted by name. A tool whose program is
// missing stays listed (the catalog is the config); calling it says why.
func (p *Provider) Tools(ctx context.Context) ([]catalog.Tool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]catalog.Tool, len(p.tools))
	for i, t := range p.tools {
		out[i] = t.cat
	}
	return out, nil
}

// Call expands the tool's template with args and runs the program.
func (p *Provider) Call(ctx context.Context, ct catalog.Tool, raw json.RawMessage) (*provider.Result, error) {
	t, list, err := p.expand(ct, raw)
	if err != nil {
		return nil, err
	}
	return p.run(ctx, t, list)
}

// ValidateArguments implements provider.ArgumentValidator: the template's
// own rules (the "--" rule, enums, required parameters) are checked in the
// pipeline's validate stage, before anyone confirms the call. Expansion is
// pure: nothing runs.
func (p *Provider) ValidateArguments(ct catalog.Tool, raw json.RawMessage) error {
	_, _, err := p.expand(ct, raw)
	return err
}

// expand decodes the arguments and expands the tool's argv template.
func (p *Provider) expand(ct catalog.Tool, raw json.RawMessage) (*tool, []string, error) {
	t := p.byName[ct.Name]
	if t == nil {
		return nil, nil, toolerr.New(toolerr.UnknownTool, "List the provider's tools again.", "%s has no tool %q", p.opts.ID, ct.Name)
	}
	args, err := argv.DecodeArgs(raw)
	if err == nil {
		var list []string
		list, err = t.tmpl.Expand(t.params, args)
		if err == nil {
			return t, list, nil
		}
	}
	var ae *argv.ArgError
	if !errors.As(err, &ae) {
		return nil, nil, err
	}
	hint := ae.Hint
	if hint == "" {
		hint = "Fix the argument to match expected_schema and call again."
	}
	ptr := "/"
	if ae.Param != "" {
		ptr += ae.Param
	}
	return nil, nil, toolerr.New(toolerr.InvalidArguments, hint, "arguments for %q: %s", ct.Name, ae.Error()).
		With("problems", []map[string]string{{"path": ptr, "message": ae.Msg}}).
		With("expected_schema", t.cat.InputSchema)
}

func (p *Provider) run(ctx context.Context, t *tool, list []string) (*provider.Result, error) {
	what := fmt.Sprintf("%s tool %q", p.opts.ID, t.cat.Name)
	path, err := p.resolve(t.program)
	if err != nil {
		return nil, toolerr.New(toolerr.ProviderUnavailable,
			"The program is not installed where the runtime looks (run `agent-tools doctor`); tell the user, do not retry.",
			"%s cannot run: %v", what, err)
	}
	dir, err := p.workDir(t.dir)
	if err != nil {
		return nil, toolerr.New(toolerr.ProviderUnavailable,
			"The tool's working directory is wrong on this machine; tell the user, do not retry.",
			"%s cannot run: %v", what, err)
	}
	res, err := proc.Run(ctx, proc.Spec{
		Path:      path,
		Args:      list[1:],
		Dir:       dir,
		Env:       p.env,
		Timeout:   t.timeout,
		MaxOutput: p.opts.MaxOutput,
	})
	if err != nil {
		return nil, toolerr.New(toolerr.BackendError,
			"The program could not be started; tell the user (`agent-tools doctor` checks it).",
			"%s could not start %s: %v", what, filepath.Base(path), errors.Unwrap(err))
	}
	out, err := proc.Shape(ctx, res, proc.Subject{
		What:    what,
		Timeout: t.timeout,
		TimeoutHint: fmt.Sprintf("The program and its child processes were killed after %s. Narrow the request; if it legitimately needs longer, the user can raise timeout: for tool %q of provider %q in agent-tools.yaml.",
			proc.FormatDuration(t.timeout), t.cat.Name, p.opts.ID),
	})
	if err != nil {
		return nil, err
	}
	return &provider.Result{Text: out.Text, IsError: out.IsError, Details: out.Details}, nil
}

// resolve returns the program's absolute path, looking again when it was
// missing (it may have been installed since).
func (p *Provider) resolve(name string) (string, error) {
	p.mu.Lock()
	pr := p.programs[name]
	p.mu.Unlock()
	if pr != nil && pr.err == nil {
		return pr.path, nil
	}
	pr = p.lookup(name)
	p.mu.Lock()
	p.programs[name] = pr
	p.mu.Unlock()
	return pr.path, pr.err
}

func (p *Provider) lookup(name string) *program {
	path, err := lookPath(name, envValue(p.env, "PATH"), p.opts.BaseDir)
	return &program{path: path, err: err}
}

// workDir checks, at call time and through symbolic links, that dir exists
// and lies inside the root.
func (p *Provider) workDir(dir string) (string, error) {
	if dir == "" {
		return "", nil // a provider built in code without any directory: ours
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, errors.Unwrap(err))
	}
	if p.root == "" {
		return dir, nil
	}
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		root = p.root
	}
	if rel, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("working directory %s leads outside %s (through a symbolic link)", dir, p.root)
	}
	return dir, nil
}
