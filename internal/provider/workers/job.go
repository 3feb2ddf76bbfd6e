package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/text"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// result is the job envelope (docs/workers.md, "Result").
type result struct {
	JobID              string     `json:"job_id"`
	Status             string     `json:"status"` // success | partial | failed
	ErrorCategory      string     `json:"error_category,omitempty"`
	Provider           string     `json:"provider"`
	Model              string     `json:"model"`
	Effort             string     `json:"effort"`
	Mode               string     `json:"mode"`
	DurationMS         int64      `json:"duration_ms"`
	ExitCode           int        `json:"exit_code"`
	Summary            string     `json:"summary"`
	SummaryTruncated   bool       `json:"summary_truncated"`
	FilesChanged       []string   `json:"files_changed"`
	ScopeViolations    []string   `json:"scope_violations"`
	Attribution        string     `json:"attribution"` // git | worktree | unavailable
	Commits            []string   `json:"commits,omitempty"`
	TestsOrChecksRun   []string   `json:"tests_or_checks_run"`
	TestResults        string     `json:"test_results"`
	Verification       []check    `json:"verification"`
	ConcernsOrBlockers []string   `json:"concerns_or_blockers"`
	StderrTail         string     `json:"stderr_tail"`
	Warnings           []string   `json:"warnings"`
	Isolation          *isolation `json:"isolation,omitempty"`
	// Saved says where the user's uncommitted work was kept before the job
	// (nil when the tree had none).
	Saved *savedChanges `json:"saved_changes,omitempty"`
}

// isolation reports an implement job run in its own git worktree.
type isolation struct {
	Diff          string `json:"diff"`
	DiffTruncated bool   `json:"diff_truncated,omitempty"`
	Applied       bool   `json:"applied"`
	Reason        string `json:"reason,omitempty"`
}

const resultSchema = `{"type":"object","properties":{` +
	`"job_id":{"type":"string"},"status":{"type":"string","enum":["success","partial","failed"]},"error_category":{"type":"string"},` +
	`"provider":{"type":"string"},"model":{"type":"string"},"effort":{"type":"string"},"mode":{"type":"string"},` +
	`"duration_ms":{"type":"integer"},"exit_code":{"type":"integer"},"summary":{"type":"string"},"summary_truncated":{"type":"boolean"},` +
	`"files_changed":{"type":"array","items":{"type":"string"}},"scope_violations":{"type":"array","items":{"type":"string"}},` +
	`"attribution":{"type":"string"},"tests_or_checks_run":{"type":"array","items":{"type":"string"}},"test_results":{"type":"string"},` +
	`"verification":{"type":"array"},"concerns_or_blockers":{"type":"array","items":{"type":"string"}},"stderr_tail":{"type":"string"},` +
	`"warnings":{"type":"array","items":{"type":"string"}},` +
	`"saved_changes":{"type":"object","properties":{"ref":{"type":"string"},"commit":{"type":"string"},"touched":{"type":"array","items":{"type":"string"}},"restore":{"type":"string"}}}},"required":["job_id","status","provider","mode","files_changed","scope_violations"]}`

// authRE recognises a CLI saying its user is not logged in.
var authRE = regexp.MustCompile(`(?i)not logged in|please (run )?/?login|log ?in (is )?required|authenticat(e|ion) (required|failed)|unauthori[sz]ed|invalid api key|missing api key|auth method|\b401\b`)

// job is one run in progress.
type job struct {
	p        *Provider
	id       string
	req      *request
	allowed  []string
	noTouch  []string
	relevant []string
	start    time.Time
	res      *result
	// debugPrompt and debugOutput reach the job log only with debug: true.
	debugPrompt, debugOutput string
	// tap reads a JSONL worker's events as they arrive (nil otherwise).
	tap *eventTap
	// saved is where the tree's uncommitted work was kept (nil: none).
	saved *savedChanges
	// attrFailed: git could read the repository before the job, not after.
	attrFailed bool
}

func (p *Provider) run(ctx context.Context, args json.RawMessage) (_ *provider.Result, err error) {
	j := &job{p: p, start: time.Now(), id: fmt.Sprintf("%s-%d", p.ID, p.seq.Add(1))}
	defer func() {
		if te, ok := toolerr.As(err); ok {
			te.Hint = strings.ReplaceAll(te.Hint, "<id>_", p.ID+"_") // name the real status tool
		}
		p.logJob(j, err) // refusals too: every call is one line
	}()
	if p.closing.Load() {
		return nil, failure("shutdown", "The runtime is shutting down; call again after it restarts.", "provider %q is shutting down", p.ID)
	}
	cmds, timeout, te := j.prepare(args)
	if te != nil {
		return nil, te
	}
	r := j.req
	var clamp string
	if timeout > p.Timeout {
		clamp = fmt.Sprintf("timeout %s exceeds the provider's %s: the job runs with %s", timeout, p.Timeout, p.Timeout)
	}
	if timeout <= 0 || timeout > p.Timeout {
		timeout = p.Timeout
	}
	if dl, ok := ctx.Deadline(); ok {
		// Leave the runtime's deadline room for attribution and verification.
		if left := time.Until(dl) - time.Second; left < timeout {
			timeout = max(left, time.Second)
		}
	}
	bin, err := p.executable()
	if err != nil {
		return nil, failure("executable_not_found",
			"Install the CLI (see docs/workers.md) or set command: in the provider's config; <id>_status shows what was found.",
			"%s worker: executable %q not found", p.worker.Name, p.command).With("command", p.command)
	}
	warnings, te := p.checkModel(ctx, r.Model, r.Effort)
	if te != nil {
		return nil, te
	}
	if clamp != "" {
		warnings = append(warnings, clamp)
	}
	if r.Mode == "implement" {
		release, c := p.locks.acquire(j.id, j.allowed)
		if c != nil {
			return nil, failure("scope_conflict",
				fmt.Sprintf("Wait for job %s to finish (see <id>_status), or give allowed_paths that do not overlap its scope.", c.Holder),
				"allowed_paths overlap the write scope of running job %s", c.Holder).
				With("holder", c.Holder).With("holder_scopes", c.HolderScopes).With("overlapping", c.Overlapping)
		}
		defer release()
	}
	if p.isolation != "worktree" || r.Mode != "implement" {
		release, holder := p.locks.enterTree(j.id, r.Mode == "implement")
		if holder != "" {
			return nil, failure("scope_conflict",
				fmt.Sprintf("Wait for job %s to finish (see <id>_status); to run implement jobs side by side, the user can set isolation: worktree.", holder),
				"job %s is running in the same work tree: without isolation an implement job has the tree to itself, since the runtime cannot tell which job's process wrote a file", holder).
				With("holder", holder)
		}
		defer release()
	}
	if !p.track(&activeJob{ID: j.id, Mode: r.Mode, Model: r.Model, Scopes: j.allowed, Started: j.start}) {
		return nil, failure("shutdown", "The runtime is shutting down; call again after it restarts.", "provider %q is shutting down", p.ID)
	}
	defer p.untrack(j.id)

	j.res = &result{JobID: j.id, Provider: p.ID, Model: r.Model, Effort: r.Effort, Mode: r.Mode,
		FilesChanged: []string{}, ScopeViolations: []string{}, TestsOrChecksRun: []string{}, Verification: []check{},
		ConcernsOrBlockers: []string{}, Warnings: append([]string{}, warnings...), ExitCode: -1}
	if p.worker.Name == "agy" {
		j.warn("agy's flags come from the worker presets (docs/workers.md; agy is not on npm): unverified against an installed CLI")
	}
	return j.execute(ctx, bin, timeout, cmds)
}

// prepare parses and checks the request without side effects: everything a
// call can get wrong before any process starts. ValidateArguments runs the
// same checks in the pipeline's validate stage, before anyone confirms.
func (j *job) prepare(args json.RawMessage) ([][]string, time.Duration, *toolerr.Error) {
	r, err := parseRequest(args)
	if err != nil {
		return nil, 0, toolerr.New(toolerr.InvalidArguments, "Fix the arguments as the message says and call again.", "%v", err)
	}
	j.req = r
	if te := j.paths(); te != nil {
		return nil, 0, te
	}
	cmds, te := j.verifyCommands()
	if te != nil {
		return nil, 0, te
	}
	timeout, err := r.timeout()
	if err != nil {
		return nil, 0, toolerr.New(toolerr.InvalidArguments, "Give timeout as a duration such as \"10m\".", "%v", err)
	}
	if te := j.p.checkModelStatic(r.Model, r.Effort); te != nil {
		return nil, 0, te
	}
	return cmds, timeout, nil
}

// paths normalises every path of the request against the project root.
func (j *job) paths() *toolerr.Error {
	norm := func(field string, in []string) ([]string, *toolerr.Error) {
		out := make([]string, 0, len(in))
		for _, s := range in {
			n, err := NormalizePath(j.p.root, s)
			if err != nil {
				return nil, failure("path_outside_project",
					"Give paths relative to the project root, inside it (no \"..\", no absolute paths elsewhere, no symlinks out of it).",
					"%s: %v", field, err).With("field", field).With("path", s)
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	var te *toolerr.Error
	if j.allowed, te = norm("allowed_paths", j.req.AllowedPaths); te != nil {
		return te
	}
	if j.noTouch, te = norm("no_touch", j.req.NoTouch); te != nil {
		return te
	}
	if j.relevant, te = norm("relevant_files", j.req.RelevantFiles); te != nil {
		return te
	}
	if j.req.Mode == "implement" && len(j.allowed) == 0 {
		return toolerr.New(toolerr.InvalidArguments,
			"Give allowed_paths: the files or directories the worker may change (relative to the project root).",
			"mode implement requires allowed_paths").With("category", "invalid_request")
	}
	return nil
}

func (j *job) verifyCommands() ([][]string, *toolerr.Error) {
	var out [][]string
	for _, c := range j.req.VerifyCommands {
		argv, err := splitCommand(c)
		if err != nil {
			return nil, toolerr.New(toolerr.InvalidArguments,
				"Give each verification command as one program with its arguments; split pipelines and && chains into separate entries.",
				"%v", err).With("category", "invalid_request").With("command", c)
		}
		out = append(out, argv)
	}
	return out, nil
}

func (j *job) warn(format string, args ...any) {
	j.res.Warnings = append(j.res.Warnings, fmt.Sprintf(format, args...))
}

// execute runs the worker and everything after it.
func (j *job) execute(ctx context.Context, bin string, timeout time.Duration, cmds [][]string) (*provider.Result, error) {
	p, r := j.p, j.req
	env := p.env()
	g0 := newGit(env)
	tmp, err := os.MkdirTemp("", "agent-tools-worker-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)

	// Cancellation: the client's (ctx) or the end of the shutdown grace.
	jobCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopAfter := context.AfterFunc(p.stop, func() { cancel(context.Cause(p.stop)) })
	defer stopAfter()

	workDir := p.root
	scratch := filepath.Join(tmp, "scratch")
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return nil, fmt.Errorf("scratch dir: %w", err)
	}
	before, g, gerr := j.snapshotBefore(ctx, g0, scratch)
	j.res.Attribution = "git"
	if gerr != nil {
		j.res.Attribution = "unavailable"
		j.warn("git attribution unavailable (%s): files_changed and scope_violations are empty because nothing could be checked, not because nothing changed", text.Clip(gerr.Error(), 300))
	}
	var wt *worktree
	if p.isolation == "worktree" && r.Mode == "implement" {
		if before == nil {
			return nil, failure("isolation_unavailable", "isolation: worktree needs a git repository with at least one commit.",
				"cannot isolate the job: %v", gerr)
		}
		w, dir, err := g.addWorktree(ctx, before, tmp)
		if err != nil {
			return nil, failure("isolation_unavailable", "isolation: worktree needs a git repository with at least one commit.",
				"cannot create the job's worktree: %v", err)
		}
		wt, workDir = w, dir
		defer g.removeWorktree(ctx, before.top, wt)
		j.res.Attribution = "worktree"
		j.res.Isolation = &isolation{}
	}

	prompt := assemblePrompt(r, j.allowed, j.noTouch, j.relevant)
	inv := invocation{Mode: r.Mode, Model: r.Model, Effort: r.Effort, Project: workDir, Prompt: prompt,
		OutputFile: filepath.Join(tmp, "answer.txt"), Timeout: timeout, Extra: p.extraArgs}
	var stdin []byte
	transport := p.worker.Transport
	if transport == "argument" && p.worker.ArgMax > 0 && len(prompt) > p.worker.ArgMax {
		transport = "file"
	}
	switch transport {
	case "stdin":
		stdin = []byte(prompt)
	case "file":
		inv.PromptFile = filepath.Join(tmp, "prompt.md")
		if err := os.WriteFile(inv.PromptFile, []byte(prompt), 0o600); err != nil {
			return nil, fmt.Errorf("prompt file: %w", err)
		}
	}
	argv := p.worker.Argv(inv)

	var onStdout func([]byte)
	if p.worker.Output == "jsonl" {
		j.tap = &eventTap{}
		onStdout = j.tap.Write
	}
	stopProgress := j.progress(jobCtx)
	res, err := proc.Run(jobCtx, proc.Spec{Path: bin, Args: argv, Dir: workDir, Env: env, Stdin: stdin,
		Timeout: timeout, Grace: killGrace, OnStdout: onStdout})
	answerFile, _ := os.ReadFile(inv.OutputFile)
	if err != nil {
		stopProgress("could not start")
		if errors.Is(err, fs.ErrNotExist) {
			return nil, failure("executable_not_found", "Install the CLI or fix command: in the provider's config.",
				"%s worker: %v", p.worker.Name, err).With("command", p.command)
		}
		return nil, failure("worker_failed", "Check <id>_status and the CLI's installation.", "%s worker could not start: %v", p.worker.Name, err)
	}
	j.res.ExitCode = res.ExitCode
	j.res.DurationMS = time.Since(j.start).Milliseconds()
	j.res.StderrTail = proc.Tail(proc.Text(res.Stderr), proc.TailChars)
	if res.StdoutTruncated > 0 {
		j.warn("worker stdout exceeded %d bytes: %d bytes were dropped", proc.DefaultMaxOutput, res.StdoutTruncated)
	}

	// Attribution first: whatever happened, say what changed.
	if before != nil {
		j.attribute(context.WithoutCancel(ctx), g0, before, wt, scratch)
	}

	par, perr := parseOutput(p.worker.Output, p.worker.Answer, res.Stdout, string(answerFile))
	stopProgress(fmt.Sprintf("exited %d after %s (%d events, last %q)", res.ExitCode,
		time.Since(j.start).Round(time.Second), par.Events, par.LastEvent))
	if p.debug {
		j.debugPrompt, j.debugOutput = prompt, proc.Tail(proc.Text(res.Stdout), 64<<10)
	}

	switch {
	case res.TimedOut || (res.Cancelled && errors.Is(ctx.Err(), context.DeadlineExceeded)):
		return nil, j.fail("timeout", fmt.Sprintf("The worker and its processes were killed after %s; narrow the task or raise timeout (at most the provider's %s).", timeout.Round(time.Second), p.Timeout),
			"%s worker timed out after %s", p.worker.Name, timeout.Round(time.Second))
	case res.Cancelled && errors.Is(context.Cause(jobCtx), errShutdown):
		return nil, j.fail("shutdown", "The runtime shut down while the job ran; its processes were killed after the grace period. Check files_changed before calling again.",
			"%s worker was cancelled by shutdown after a %s grace period", p.worker.Name, p.grace)
	case res.Cancelled:
		return nil, j.fail("cancelled", "", "%s worker was cancelled; its processes were killed", p.worker.Name)
	}
	errText := proc.Text(res.Stderr) + "\n" + par.WorkerError
	if res.ExitCode != 0 || par.WorkerError != "" {
		if authRE.MatchString(errText) || authRE.MatchString(proc.Text(res.Stdout)) {
			return nil, j.fail("authentication_required",
				fmt.Sprintf("Ask the user to log in to %s in a terminal (as they normally would); agent-tools never handles its credentials.", p.worker.Name),
				"%s worker is not logged in", p.worker.Name)
		}
		msg := par.WorkerError
		if msg == "" {
			msg = fmt.Sprintf("exit status %d", res.ExitCode)
		}
		return nil, j.fail("worker_failed", "Read stderr_tail; one call is one attempt, decide whether another is worth it.",
			"%s worker failed: %s", p.worker.Name, text.Clip(msg, 300))
	}
	if perr != nil {
		return nil, j.fail("output_parse_failed", "The CLI's output format may have changed; check <id>_status and the CLI version.",
			"%s worker output could not be parsed: %v", p.worker.Name, perr).
			With("stdout_head", head(proc.Text(res.Stdout), 2000))
	}
	j.res.Summary, j.res.SummaryTruncated = capSummary(par.Answer, SummaryMax)
	j.res.Status = "success"
	if len(j.res.ScopeViolations) > 0 {
		j.res.Status, j.res.ErrorCategory = "partial", "scope_violation"
		j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers,
			fmt.Sprintf("the worker changed %d file(s) outside its scope (see scope_violations); nothing was reverted", len(j.res.ScopeViolations)))
	}
	if j.attrFailed {
		// The repository could be read before the job and not after: the
		// worker may have broken it on purpose, so this is never a success.
		j.res.Status, j.res.ErrorCategory = "partial", "attribution_failed"
		j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers,
			"the repository could not be read after the job (see warnings): nothing the worker changed could be checked")
	}
	if r.Mode == "implement" {
		j.verify(ctx, workDir, env, cmds)
	}
	if wt != nil {
		j.applyIsolated(ctx, g, before, tmp)
		if j.res.Isolation.Applied {
			p.recordApplied(j.id, j.res.FilesChanged)
		}
	}
	j.res.DurationMS = time.Since(j.start).Milliseconds()
	shown := j.res.shown()
	b, _ := jsonscan.Marshal(shown)
	return &provider.Result{Text: string(b), Structured: shown}, nil
}

// fail turns the job into a failed envelope that still carries what git saw.
func (j *job) fail(category, hint, format string, args ...any) *toolerr.Error {
	j.res.Status, j.res.ErrorCategory = "failed", category
	j.res.DurationMS = time.Since(j.start).Milliseconds()
	te := failure(category, hint, format, args...)
	var m map[string]any
	b, _ := json.Marshal(j.res)
	_ = json.Unmarshal(b, &m)
	for k, v := range m {
		if k != "status" && k != "summary" && k != "summary_truncated" {
			te.With(k, v)
		}
	}
	return te
}

// snapshotBefore pins git to the project's repository (found before the
// worker runs, so the worker cannot redirect it), records its content, and
// saves the user's uncommitted work under refs/agent-tools/saved/.
func (j *job) snapshotBefore(ctx context.Context, g0 git, scratch string) (*snapshot, git, error) {
	top, gitDir, common, err := g0.locate(ctx, j.p.root)
	if err != nil {
		return nil, g0, err
	}
	g, err := g0.pin(ctx, gitDir, top)
	if err != nil {
		return nil, g0, err
	}
	s, err := g.takeSnapshot(ctx, top, gitDir, common, j.p.root, scratch)
	if err != nil {
		return nil, g0, err
	}
	ref, commit, err := g.saveUncommitted(ctx, s, j.id)
	switch {
	case err != nil:
		j.warn("your uncommitted changes could not be saved before the job: %v", err)
	case ref != "":
		s.refs[ref] = commit
		paths, _ := g.uncommittedPaths(ctx, s)
		j.saved = &savedChanges{Ref: ref, Commit: commit, Touched: []string{}, paths: paths,
			Restore: "git restore --source=" + ref + " --worktree -- <paths> (or: git checkout " + commit + " -- <paths>)"}
		j.res.Saved = j.saved
	}
	if j.req.Mode == "implement" {
		for _, l := range linksOut(j.p.root, j.allowed) {
			if inScope(l.path, j.allowed, j.noTouch) {
				j.warn("%s is a symbolic link to %s, outside the project: a write through it lands there, where attribution cannot see it", l.path, l.target)
			}
		}
	}
	return s, g, nil
}

// linksLeaving makes every changed path that is now a symbolic link out of
// the project (root) a violation: a write through it lands outside, where
// attribution cannot see it.
func (j *job) linksLeaving(root string, changed []string) {
	for _, c := range changed {
		if strings.HasPrefix(c, outsidePrefix) {
			continue
		}
		if target, out := linkOut(root, c); out {
			j.res.ScopeViolations = append(j.res.ScopeViolations, c)
			j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers,
				fmt.Sprintf("%s is a symbolic link to %s, outside the project: writes through it are not attributed", c, target))
		}
	}
}

// savedChanges is where the user's uncommitted work was kept before the job.
type savedChanges struct {
	Ref     string   `json:"ref"`
	Commit  string   `json:"commit"`
	Touched []string `json:"touched"`
	Restore string   `json:"restore"`
	paths   []string // top-relative paths that held uncommitted changes
}

// attribute fills files_changed and scope_violations from content
// snapshots: git pinned afresh (the worker may have changed the config), the
// work tree hashed from a fresh index, refs, index flags and .git files
// compared.
func (j *job) attribute(ctx context.Context, g0 git, before *snapshot, wt *worktree, scratch string) {
	var (
		a     *attribution
		after *snapshot
	)
	g, err := g0.pin(ctx, before.gitDir, before.top)
	if err == nil {
		after, err = g.takeSnapshot(ctx, before.top, before.gitDir, before.common, j.p.root, scratch)
	}
	if err == nil {
		a, err = g.diff(ctx, before, after)
	}
	if err != nil {
		j.res.Attribution, j.attrFailed = "unavailable", true
		j.warn("git attribution failed after the run: %v", text.Clip(err.Error(), 300))
		return
	}
	var changed []string
	if wt != nil {
		diff, paths, err := g.worktreeDiff(ctx, wt, scratch)
		if err != nil {
			j.attrFailed = true
			j.warn("worktree diff failed: %v", text.Clip(err.Error(), 300))
		}
		j.res.Isolation.Diff = diff
		for _, p := range paths {
			changed = append(changed, projectPath(before.prefix, p))
		}
		// The project tree itself must not change while the job works in
		// its worktree: a change there is a write by absolute path (or by
		// someone else), never in scope.
		applied := j.p.appliedSince(j.id, j.start)
		for _, c := range a.Changed {
			if applied[c] {
				j.warn("%s was changed in the project tree by another job's applied diff: not attributed to this job", c)
				continue
			}
			j.res.FilesChanged = append(j.res.FilesChanged, c)
			j.res.ScopeViolations = append(j.res.ScopeViolations, c)
			j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers, c+" changed in the project tree, outside the job's worktree")
		}
		j.linksLeaving(filepath.Join(wt.dir, filepath.FromSlash(before.prefix)), changed)
	} else {
		j.res.Commits = a.Commits
		applied := j.p.appliedSince(j.id, j.start)
		for _, c := range a.Changed {
			if applied[c] {
				j.warn("%s was changed by another job's applied diff: not attributed to this job", c)
				continue
			}
			changed = append(changed, c)
		}
		if len(a.Commits) > 0 {
			j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers, fmt.Sprintf("HEAD moved: the worker made %d commit(s)", len(a.Commits)))
		}
		if others := j.p.locks.concurrent(j.id, j.start); len(others) > 0 {
			ids := make([]string, 0, len(others))
			for id := range others {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers, "other jobs ran meanwhile ("+strings.Join(ids, ", ")+"): a change in this tree may be theirs, and is reported on each job that saw it")
		}
		j.linksLeaving(j.p.root, changed)
	}
	j.res.FilesChanged = append(j.res.FilesChanged, changed...)
	for _, c := range changed {
		if (j.req.Mode != "implement" || !inScope(c, j.allowed, j.noTouch)) && !slices.Contains(j.res.ScopeViolations, c) {
			j.res.ScopeViolations = append(j.res.ScopeViolations, c)
		}
	}
	// Changes git status does not show are violations in every mode.
	for _, h := range a.Hidden {
		j.res.ScopeViolations = append(j.res.ScopeViolations, "repository: "+h)
	}
	slices.Sort(j.res.FilesChanged)
	j.res.FilesChanged = slices.Compact(j.res.FilesChanged)
	if s := j.saved; s != nil {
		now, _ := g.changedBetween(ctx, before.top, before.tree, after.tree)
		for _, p := range s.paths {
			if slices.Contains(now, p) {
				s.Touched = append(s.Touched, projectPath(before.prefix, p))
			}
		}
		if len(s.Touched) > 0 {
			j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers, fmt.Sprintf(
				"the job changed %d file(s) that held your uncommitted changes (%s); they were saved before the job: git restore --source=%s --worktree -- <paths>",
				len(s.Touched), strings.Join(s.Touched, ", "), s.Ref))
		}
	}
}

// verify runs the checks; a failing one turns success into partial.
func (j *job) verify(ctx context.Context, dir string, env []string, cmds [][]string) {
	if j.req.SkipVerification {
		j.warn("verification skipped at the caller's request: nothing checked the worker's claims")
		return
	}
	if len(cmds) == 0 {
		cmds = j.p.verify
	}
	if len(cmds) == 0 {
		cmds = projectChecks(dir)
	}
	if len(cmds) == 0 {
		j.warn("no verification ran: no verify_commands given, no verify: in the config and no project checks found (package.json typecheck/test, go.mod, Makefile test)")
		return
	}
	j.res.Verification = verify(ctx, dir, env, cmds)
	passed := 0
	for _, c := range j.res.Verification {
		j.res.TestsOrChecksRun = append(j.res.TestsOrChecksRun, c.Command)
		if c.OK {
			passed++
		} else {
			j.res.ConcernsOrBlockers = append(j.res.ConcernsOrBlockers, fmt.Sprintf("check failed: %s (exit %d)", c.Command, c.ExitCode))
		}
	}
	j.res.TestResults = fmt.Sprintf("%d of %d checks passed", passed, len(j.res.Verification))
	if passed < len(j.res.Verification) {
		j.res.Status, j.res.ErrorCategory = "partial", "verification_failed"
	}
}

// applyIsolated applies the worktree's diff when asked and in scope.
func (j *job) applyIsolated(ctx context.Context, g git, before *snapshot, tmp string) {
	iso := j.res.Isolation
	switch {
	case iso.Diff == "":
		iso.Reason = "the worker changed nothing"
	case !j.req.Apply:
		iso.Reason = "not applied: call with apply: true to apply it to the project"
	case len(j.res.ScopeViolations) > 0:
		iso.Reason = "not applied: the diff leaves the job's scope (see scope_violations)"
	case j.res.Status != "success":
		iso.Reason = "not applied: the job is " + j.res.Status + " (" + j.res.ErrorCategory + ")"
	default:
		if err := g.applyDiff(ctx, before.top, iso.Diff, tmp); err != nil {
			iso.Reason = "not applied: " + text.Clip(err.Error(), 300)
			return
		}
		iso.Applied = true
	}
}

// progress reports elapsed time while the worker runs — with the events a
// JSONL worker has emitted so far and the kind of the last — and stop sends
// the final message.
func (j *job) progress(ctx context.Context) (stop func(msg string)) {
	name := j.p.worker.Name
	provider.ReportProgress(ctx, 0, 0, fmt.Sprintf("%s %s job %s started", name, j.req.Mode, j.id))
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(j.p.progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				el := time.Since(j.start)
				msg := fmt.Sprintf("%s running, %s elapsed", name, el.Round(time.Second))
				if j.tap != nil {
					if n, last := j.tap.seen(); n > 0 {
						msg += fmt.Sprintf(", %d events, last %q", n, last)
					}
				}
				provider.ReportProgress(ctx, el.Seconds(), 0, msg)
			}
		}
	}()
	return func(msg string) {
		close(done)
		<-finished
		provider.ReportProgress(ctx, time.Since(j.start).Seconds(), 0, name+" "+msg)
	}
}

// track registers a running job, unless Close has begun (under the same
// lock, so that no job starts after Close waits for the running ones).
func (p *Provider) track(a *activeJob) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() {
		return false
	}
	p.running.Add(1)
	p.active[a.ID] = a
	return true
}

func (p *Provider) untrack(id string) {
	p.mu.Lock()
	delete(p.active, id)
	p.mu.Unlock()
	p.running.Done()
}

// logJob writes the call's JSONL record (prompt and output only in debug).
func (p *Provider) logJob(j *job, err error) {
	rec := jobRecord{Time: time.Now().UTC(), Job: j.id, Provider: p.ID, Status: "failed"}
	if j.req != nil {
		rec.Model, rec.Effort, rec.Mode = j.req.Model, j.req.Effort, j.req.Mode
	}
	if j.res != nil {
		rec.Status, rec.Category = or(j.res.Status, "failed"), j.res.ErrorCategory
		if j.res.ExitCode != -1 {
			code := j.res.ExitCode
			rec.ExitCode = &code
		}
	}
	rec.DurationMS = time.Since(j.start).Milliseconds()
	if te, ok := toolerr.As(err); ok {
		if c, ok := te.Details["category"].(string); ok {
			rec.Category = c
		} else {
			rec.Category = strings.ToLower(string(te.Code))
		}
	} else if err != nil {
		rec.Category = "internal"
	}
	if p.debug {
		rec.Prompt, rec.Output = j.debugPrompt, j.debugOutput
	}
	if werr := p.jobs.write(rec); werr != nil {
		p.log.Warn("workers: job log", "err", werr)
	}
	p.log.Info("workers job", "job", j.id, "mode", rec.Mode, "status", rec.Status, "category", rec.Category, "duration_ms", rec.DurationMS)
}

// diffMax bounds the isolation diff in the result (the full diff is what
// apply uses).
const diffMax = 8000

// shown is the envelope as returned: a long diff is cut (head and tail) so
// that the runtime's result cap never breaks the JSON.
func (r *result) shown() *result {
	v := *r
	if r.Isolation != nil && len(r.Isolation.Diff) > diffMax {
		iso := *r.Isolation
		iso.Diff, _ = capSummary(iso.Diff, diffMax)
		iso.DiffTruncated = true
		v.Isolation = &iso
	}
	return &v
}
