// Package workers is provider kind workers (docs/workers.md): it hands a
// structured task to a coding-agent CLI the user is already logged into
// (codex, claude, gemini, agy, or any CLI declared in config) and returns a
// compact result that the runtime verified itself: which files really
// changed (from git, never from the worker's word), whether the worker stayed
// in its scope, and whether the project's own checks pass.
//
// Each provider has two tools: run (one job = one attempt, never retried)
// and status (no inference). run is mutating in the catalog; its analyze and
// review calls are classified read-only per call (provider.CallClassifier),
// so only implement needs confirmation.
package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Defaults of a workers provider.
const (
	DefaultTimeout       = 30 * time.Minute
	DefaultShutdownGrace = 10 * time.Second
	// killGrace is SIGTERM → SIGKILL for a worker's process group: 3 s, long
	// enough for a CLI to flush its output.
	killGrace = 3 * time.Second
)

var (
	_ provider.Provider          = (*Provider)(nil)
	_ provider.Closer            = (*Provider)(nil)
	_ provider.Diagnoser         = (*Provider)(nil)
	_ provider.CallClassifier    = (*Provider)(nil)
	_ provider.ArgumentValidator = (*Provider)(nil)
	_ provider.HumanApprover     = (*Provider)(nil)
)

// Provider is one workers provider: one worker CLI.
type Provider struct {
	provider.Header // id, description, hint, confirmation, timeout
	worker          *worker
	command         string // executable (preset's default or override)
	extraArgs       []string
	// verify are the config's verification commands (workers.<id>.verify).
	verify      [][]string
	envOverride map[string]string
	root        string // the project root, absolute and clean
	models      []string
	isolation   string
	grace       time.Duration
	debug       bool
	log         *slog.Logger
	jobs        *jobLog
	lookupEnv   func(string) (string, bool)
	// progressEvery is the heartbeat period of progress notifications.
	progressEvery time.Duration

	locks scopeLocks
	// applied records the paths isolated jobs applied to the project tree,
	// so that a concurrent isolated job does not take them for its own
	// writes by absolute path.
	appliedMu sync.Mutex
	applied   []appliedDiff
	seq       atomic.Int64
	mu        sync.Mutex
	active    map[string]*activeJob
	// stop is cancelled when the grace period after Close ends.
	stop     context.Context
	stopNow  context.CancelCauseFunc
	closing  atomic.Bool
	running  sync.WaitGroup
	closeOne sync.Once
}

// activeJob is what status reports about a running job.
type activeJob struct {
	ID      string    `json:"id"`
	Mode    string    `json:"mode"`
	Model   string    `json:"model,omitempty"`
	Scopes  []string  `json:"scopes,omitempty"`
	Started time.Time `json:"started"`
}

// errShutdown is the cause of jobs cancelled after the shutdown grace.
var errShutdown = errors.New("the runtime shut down")

// Build is kind workers' entry in the runtime's table of provider kinds.
func Build(h provider.Header, s config.Spec, deps provider.Deps) (provider.Provider, error) {
	spec, ok := s.(*Spec)
	if !ok {
		return nil, fmt.Errorf("provider %q: not a workers entry", h.ID)
	}
	return New(h, spec, deps)
}

// New builds the provider. It starts nothing and succeeds when the CLI is
// missing (doctor says so; run answers EXECUTABLE_NOT_FOUND).
func New(h provider.Header, spec *Spec, deps provider.Deps) (*Provider, error) {
	var w *worker
	if spec.Preset != "" {
		base, ok := presets[spec.Preset]
		if !ok {
			return nil, fmt.Errorf("provider %q: unknown preset %q", h.ID, spec.Preset)
		}
		w = base
	} else {
		w = custom(spec)
	}
	root := spec.Cwd
	if root == "" {
		root = deps.ProjectDir
	}
	if root == "" {
		root, _ = os.Getwd()
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("provider %q: project root: %w", h.ID, err)
	}
	p := &Provider{
		Header: h, worker: w, command: or(spec.Command, w.Bin), envOverride: spec.Env,
		root: filepath.Clean(root), models: spec.Models, isolation: spec.Isolation, grace: spec.ShutdownGrace.Duration,
		debug: spec.Debug, log: deps.Log, jobs: &jobLog{path: spec.JobLog}, lookupEnv: deps.Env,
		progressEvery: 2 * time.Second, active: map[string]*activeJob{},
	}
	if spec.Preset != "" {
		p.extraArgs = spec.Args
	}
	for _, c := range spec.Verify {
		argv, err := splitCommand(c)
		if err != nil {
			return nil, fmt.Errorf("provider %q: verify: %w", h.ID, err)
		}
		p.verify = append(p.verify, argv)
	}
	if strings.Contains(p.command, "/") && !filepath.IsAbs(p.command) {
		// A relative path with a slash means the config's directory, never
		// the job's working directory (which may be an isolated worktree).
		p.command = filepath.Join(or(deps.ConfigDir, p.root), p.command)
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.grace <= 0 {
		p.grace = DefaultShutdownGrace
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.lookupEnv == nil {
		p.lookupEnv = os.LookupEnv
	}
	if p.Description == "" {
		p.Description = fmt.Sprintf("Delegate a coding task to the %s CLI as a worker: scoped, attributed from git, verified by the project's checks.", w.Name)
	}
	p.stop, p.stopNow = context.WithCancelCause(context.Background())
	return p, nil
}

// Info implements provider.Provider.
func (p *Provider) Info() catalog.ProviderInfo {
	hint := p.DiscoverHint
	if hint == "" {
		hint = "delegate coding tasks (analyze, review, implement) to a " + p.worker.Name + " worker"
	}
	return catalog.ProviderInfo{ID: p.ID, Kind: "workers", Description: p.Description, DiscoverHint: hint,
		RequireConfirm: p.RequireConfirm, Timeout: p.Timeout}
}

// Tools implements provider.Provider: run and status.
func (p *Provider) Tools(context.Context) ([]catalog.Tool, error) {
	w := p.worker.Name
	return []catalog.Tool{
		{
			Provider: p.ID, Name: "run", Title: "Run a " + w + " worker job",
			Description: "Delegate one task to the " + w + " CLI as a worker and get a verified result: files_changed and scope_violations computed from git, " +
				"the project's checks run after the worker (a failing check makes the result partial). mode analyze/review is read-only; " +
				"implement needs allowed_paths and confirmation. One call is one attempt; nothing is retried or substituted.",
			InputSchema: json.RawMessage(strings.ReplaceAll(runSchema, "<id>_", p.ID+"_")), OutputSchema: json.RawMessage(resultSchema),
		},
		{
			Provider: p.ID, Name: "status", Title: w + " worker status",
			Description: "Without running any model: the " + w + " CLI's version, path and login state, model availability (available, unavailable or unverified) " +
				"and where it comes from, active jobs and their write scopes, whether git attribution works here, and warnings.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`), ReadOnly: true,
		},
	}, nil
}

// ReadOnlyCall implements provider.CallClassifier: analyze and review
// change nothing (the CLI's read-only mode, and git attribution reports any
// write), so only implement needs confirmation.
func (p *Provider) ReadOnlyCall(tool catalog.Tool, args json.RawMessage) bool {
	if tool.Name != "run" {
		return tool.ReadOnly
	}
	var r struct {
		Mode string `json:"mode"`
	}
	return json.Unmarshal(args, &r) == nil && (r.Mode == "analyze" || r.Mode == "review")
}

// ValidateArguments implements provider.ArgumentValidator: the request's
// own rules (implement needs allowed_paths, paths inside the project,
// verification commands without shell operators, a valid timeout, a model
// routed here and an effort the CLI has), checked before policy so that no
// one confirms a run that could not start. Nothing runs and nothing is read
// but the file system's view of the paths.
func (p *Provider) ValidateArguments(tool catalog.Tool, args json.RawMessage) error {
	if tool.Name != "run" {
		return nil
	}
	if _, _, te := (&job{p: p}).prepare(args); te != nil {
		te.Hint = strings.ReplaceAll(te.Hint, "<id>_", p.ID+"_")
		return te
	}
	return nil
}

// NeedsHumanApproval implements provider.HumanApprover: verification
// commands the call supplies are programs the runtime itself runs, outside
// the worker's sandbox and with the user's environment, so a person approves
// them whatever the confirm mode. The config's verify: list (and the
// project's own checks) need no approval.
func (p *Provider) NeedsHumanApproval(tool catalog.Tool, args json.RawMessage) (string, bool) {
	if tool.Name != "run" {
		return "", false
	}
	var r request
	if json.Unmarshal(args, &r) != nil || r.Mode != "implement" || r.SkipVerification {
		return "", false
	}
	var extra []string
	for _, c := range r.VerifyCommands {
		argv, err := splitCommand(c)
		if err != nil || !slices.ContainsFunc(p.verify, func(v []string) bool { return slices.Equal(v, argv) }) {
			extra = append(extra, c)
		}
	}
	if len(extra) == 0 {
		return "", false
	}
	return fmt.Sprintf("After the worker, the runtime itself would run these verify_commands with your environment, outside the worker's sandbox: %q. "+
		"Only the provider's configured verify: list runs without a person's approval.", extra), true
}

// Call implements provider.Provider.
func (p *Provider) Call(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
	switch tool.Name {
	case "run":
		return p.run(ctx, args)
	case "status":
		st := p.status(ctx)
		b, _ := jsonscan.MarshalIndent(st, "", "  ")
		return &provider.Result{Text: string(b), Structured: st}, nil
	}
	return nil, toolerr.New(toolerr.UnknownTool, "", "provider %q has no tool %q", p.ID, tool.Name)
}

// Close lets running jobs finish for the shutdown grace period, then
// cancels them (their process trees are killed and their results say so).
func (p *Provider) Close() error {
	p.closeOne.Do(func() {
		p.mu.Lock()
		p.closing.Store(true)
		p.mu.Unlock()
		done := make(chan struct{})
		go func() { p.running.Wait(); close(done) }()
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			p.stopNow(errShutdown)
			<-done
		}
		p.stopNow(errShutdown)
	})
	return nil
}

// Diagnostics implements provider.Diagnoser for doctor (no inference).
func (p *Provider) Diagnostics() []provider.Diagnostic {
	var out []provider.Diagnostic
	path, err := p.executable()
	if err != nil {
		out = append(out, provider.Diagnostic{Provider: p.ID, Item: p.command, Status: "warning",
			Reason: "executable not found: " + p.command + " (the provider loads; run answers EXECUTABLE_NOT_FOUND)"})
	} else {
		out = append(out, provider.Diagnostic{Provider: p.ID, Item: p.command, Status: "ok", Reason: path})
	}
	if p.worker.Name != "custom" {
		verdict, why := "unverified", p.worker.Name+"'s flags come from the worker presets (docs/workers.md), not from an installed CLI"
		if p.worker.FlagsChecked && err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			verdict, why = p.checkFlags(ctx, path, p.env())
			cancel()
		}
		if verdict != "verified" {
			out = append(out, provider.Diagnostic{Provider: p.ID, Item: "flags", Status: "warning", Reason: "unverified: " + why})
		}
	}
	if d := p.jobs.diagnose(p.ID); d != nil {
		out = append(out, *d)
	}
	if _, err := newGit(p.env()).run(context.Background(), p.root, "rev-parse", "--show-toplevel"); err != nil {
		out = append(out, provider.Diagnostic{Provider: p.ID, Item: "git", Status: "warning",
			Reason: "the project root is not in a git work tree: files_changed and scope_violations are unavailable"})
	}
	return out
}

// env is the worker's environment: the runtime's own (a coding-agent CLI
// needs the user's login state and config, as when a person runs it) plus
// the provider's env. It is never logged or returned.
func (p *Provider) env() []string {
	env := os.Environ()
	for k, v := range p.envOverride {
		env = append(env, k+"="+v)
	}
	return env
}

// executable resolves the worker's binary in the environment's PATH.
func (p *Provider) executable() (string, error) {
	if strings.Contains(p.command, "/") {
		fi, err := os.Stat(p.command)
		if err != nil {
			return "", err
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", fs.ErrPermission
		}
		return p.command, nil
	}
	pathEnv := ""
	for _, kv := range p.env() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		cand := filepath.Join(dir, p.command)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", exec.ErrNotFound
}

// failure is a failed job's error: the code is the seed's category in the
// house's upper case, details carry the category verbatim and status failed.
func failure(category, hint, format string, args ...any) *toolerr.Error {
	return toolerr.New(toolerr.Code(strings.ToUpper(category)), hint, format, args...).
		With("category", category).With("status", "failed")
}

type appliedDiff struct {
	job   string
	at    time.Time
	paths []string
}

func (p *Provider) recordApplied(job string, paths []string) {
	p.appliedMu.Lock()
	defer p.appliedMu.Unlock()
	p.applied = append(p.applied, appliedDiff{job: job, at: time.Now(), paths: slices.Clone(paths)})
	if len(p.applied) > historyMax {
		p.applied = slices.Delete(p.applied, 0, len(p.applied)-historyMax)
	}
}

// appliedSince are the paths other jobs applied to the project tree since from.
func (p *Provider) appliedSince(self string, from time.Time) map[string]bool {
	p.appliedMu.Lock()
	defer p.appliedMu.Unlock()
	out := map[string]bool{}
	for _, a := range p.applied {
		if a.job != self && !a.at.Before(from) {
			for _, x := range a.paths {
				out[x] = true
			}
		}
	}
	return out
}
