package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/codemode"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// skillCodes are the envelope codes a skill may fail with on purpose.
var skillCodes = map[string]toolerr.Code{}

func init() {
	for _, c := range []toolerr.Code{toolerr.InvalidArguments, toolerr.BackendError, toolerr.ProviderUnavailable,
		toolerr.Denied, toolerr.Timeout, toolerr.ConfirmationRequired} {
		skillCodes[string(c)] = c
	}
}

// RunSkill runs one skill with a fresh sandbox. Failures are *toolerr.Error
// (or the context's error when the caller went away).
func (d *Dir) RunSkill(ctx context.Context, name string, args json.RawMessage, tools provider.ToolCaller) (*provider.Result, error) {
	d.mu.Lock()
	d.scanLocked(ctx)
	var sk *Skill
	for _, e := range d.entries {
		if d.activeLocked(e) && e.name == name {
			sk = e.skill
		}
	}
	if sk == nil {
		err := d.unknownSkill(name)
		d.mu.Unlock()
		return nil, err
	}
	d.mu.Unlock()

	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, toolerr.New(toolerr.InvalidArguments, "Pass the skill's arguments as a JSON object (see `args` in discover).",
			"the arguments of skill %q must be a JSON object", name)
	}
	r := &runner{d: d, skill: name, tools: tools, max: d.opts.MaxCalls}
	sc := jsrun.Script{Kind: skillKind, Name: sk.file, Code: sk.code,
		Config: mustJSON(skillConfig{Skill: name, Provider: d.info.ID, Args: args}),
		Limits: jsrun.Limits{Timeout: d.opts.Timeout, MaxOutput: d.opts.MaxOutput, Memory: d.opts.Memory, CPU: d.opts.CPU}}
	start := time.Now()
	out, err := d.runner().Run(ctx, sc, r.serve)
	d.log.Debug("skill ran", "skill", name, "calls", r.callCount(), "duration", time.Since(start), "ok", err == nil)
	if err != nil {
		// A tool call cut by the skill's deadline fails before the watchdog
		// fires: that is still the skill's timeout.
		return nil, r.failure(err, time.Since(start) >= d.opts.Timeout)
	}
	for _, e := range out.Console {
		d.log.Debug("skill console", "skill", name, "level", e.Level, "text", e.Text)
	}
	return result(out), nil
}

// result turns the skill's return value into a Result.
func result(out *jsrun.Output) *provider.Result {
	res := &provider.Result{}
	var s string
	switch {
	case out.Truncated && json.Unmarshal(out.Result, &s) == nil:
		// Result holds the cut JSON text; a cut string value reads better unquoted.
		res.Text = s
		if strings.HasPrefix(s, `"`) {
			for i := len(s); i > 0 && i > len(s)-8; i-- {
				var u string
				if json.Unmarshal([]byte(s[:i]+`"`), &u) == nil {
					res.Text = u
					break
				}
			}
		}
	case len(out.Result) > 0 && out.Result[0] == '"' && json.Unmarshal(out.Result, &s) == nil:
		res.Text = s
	default:
		res.Text = string(out.Result)
		if !out.Truncated && len(out.Result) > 0 && out.Result[0] == '{' {
			var m map[string]any
			if json.Unmarshal(out.Result, &m) == nil {
				res.Structured = m
			}
		}
	}
	if out.Truncated {
		res.Text += "\n[result truncated: the skill returned more than fits; ask it for less]"
	}
	return res
}

// runner is one run's server side: it answers the script's host calls
// (skill.go's installer runs the script, in its own process) and maps a
// failure to run_skill's error.
type runner struct {
	d     *Dir
	skill string
	tools provider.ToolCaller
	max   int

	mu    sync.Mutex
	calls int
	own   map[string]bool // the provider's own tool names, loaded on the first call
	// issued are the errors the script was handed, by answer Ref - 1: the
	// failure reports the server's own copy, not what came back.
	issued []*toolerr.Error
}

// issue records te for the script and returns the answer that carries it.
func (r *runner) issue(name string, te *toolerr.Error, budget bool) answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.issued = append(r.issued, te)
	return answer{Name: name, Budget: budget, Error: toWire(te), Ref: len(r.issued)}
}

func (r *runner) callCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// serve answers the script's host calls: tools.call through the caller (the
// pipeline) within the budget, and tools.canonical.
func (r *runner) serve(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var p nameArgs
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	switch method {
	case hostCall:
		r.mu.Lock()
		name := r.resolve(ctx, p.Name)
		r.calls++
		over := r.max >= 0 && r.calls > r.max
		r.mu.Unlock()
		if over {
			te := toolerr.New(toolerr.BackendError,
				"The skill made more tool calls than one run allows; it likely loops. Report it, or do the task with individual calls.",
				"skill %q exceeded its budget of %d tool calls (call to %q refused)", r.skill, r.max, name).
				With("budget", r.max)
			return json.Marshal(r.issue(name, te, true))
		}
		args := p.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		res, err := r.tools.CallTool(ctx, name, args)
		switch {
		case err != nil:
			return json.Marshal(r.issue(name, codemode.CallError(ctx, name, err, "the skill's"), false))
		case res == nil:
			res = &provider.Result{}
		case res.IsError:
			return json.Marshal(r.issue(name, codemode.BackendError(res), false))
		}
		return json.Marshal(answer{Name: name, Result: &wireResult{Text: res.Text}})
	case hostCanonical:
		c, err := r.toolCanonical(p.Name)
		if err != nil {
			return json.Marshal(answer{Message: err.Error()})
		}
		return json.Marshal(answer{Name: c})
	}
	return nil, errors.New("unknown host call")
}

// resolve maps an own tool name of the skill's provider to its canonical
// name (the seed's adapter.call took own names); other names pass as they are.
func (r *runner) resolve(ctx context.Context, name string) string {
	if r.d.opts.OwnTools == nil {
		return name
	}
	if r.own == nil {
		r.own = map[string]bool{}
		if tools, err := r.d.opts.OwnTools(ctx); err == nil {
			for _, t := range tools {
				r.own[t.Name] = true
			}
		}
	}
	if !r.own[name] {
		return name
	}
	if c, err := r.toolCanonical(name); err == nil {
		return c
	}
	return name
}

// toolCanonical is an own tool's canonical name.
func (r *runner) toolCanonical(name string) (string, error) {
	if r.d.opts.Canonical != nil {
		return r.d.opts.Canonical(name)
	}
	return naming.Canonical(r.d.info.ID, name, r.d.info.HostLocal)
}

// failure maps a failed run to the error run_skill returns.
func (r *runner) failure(err error, expired bool) error {
	var je *jsrun.Error
	if !errors.As(err, &je) {
		return toolerr.New(toolerr.BackendError, "", "skill %q failed: %v", r.skill, err)
	}
	var fail skillFailure
	if len(je.Host) > 0 {
		_ = json.Unmarshal(je.Host, &fail)
	}
	withConsole := func(te *toolerr.Error) *toolerr.Error {
		te.With("tool_calls", r.callCount())
		if n := len(je.Console); n > 0 {
			tail := je.Console
			if n > 20 {
				tail = tail[n-20:]
			}
			te.With("console", tail)
		}
		return te
	}
	switch {
	case je.Kind == jsrun.KindTimeout, expired && je.Kind != jsrun.KindCancelled:
		return withConsole(toolerr.New(toolerr.Timeout,
			"The skill did not finish in time. Do not retry it unchanged: narrow its arguments, or do the task with individual calls.",
			"skill %q did not finish within %s", r.skill, r.d.opts.Timeout))
	case je.Kind == jsrun.KindCancelled:
		return withConsole(toolerr.New(toolerr.Cancelled, "The call was cancelled by the client.", "skill %q was cancelled", r.skill))
	}
	if t := fail.Thrown; t != nil && t.Error != nil {
		te := t.Error.toolerr()
		r.mu.Lock()
		if t.Ref > 0 && t.Ref <= len(r.issued) {
			te = r.issued[t.Ref-1]
		}
		r.mu.Unlock()
		return withConsole(r.toolFailure(codemode.Thrown{Tool: t.Tool, Err: te, Budget: t.Budget}))
	}
	if fail.Declared != nil {
		return withConsole(fail.Declared.toolerr())
	}
	te := toolerr.New(toolerr.BackendError,
		"The skill itself failed: check its arguments against `args` in discover; if they are right, the skill has a bug: report it.",
		"skill %q failed: %s", r.skill, je.Error())
	if je.Line > 0 {
		te.With("line", je.Line).With("column", je.Column)
	}
	if je.Stack != "" {
		te.With("stack", je.Stack)
	}
	return withConsole(te)
}

// toolFailure is the skill's failure when one of its tool calls failed and
// the skill did not catch it: the tool's code, with the tool's envelope.
func (r *runner) toolFailure(t codemode.Thrown) *toolerr.Error {
	if t.Budget {
		return t.Err
	}
	hint := "The skill stopped because one of its tool calls failed; read tool_error. Do not retry the skill unchanged."
	if t.Err.Code == toolerr.ConfirmationRequired {
		hint = "A tool this skill calls changes state. If the user wants this change, repeat the run_skill call with confirm: true."
	}
	return toolerr.New(t.Err.Code, hint, "skill %q: call to %q failed: %s", r.skill, t.Tool, t.Err.Message).
		With("tool", t.Tool).
		With("tool_error", t.Err.Body()["error"])
}

// runner is where skills run: Options.Runner, else each in its own limited
// process (jsrun.Isolated).
func (d *Dir) runner() jsrun.Runner {
	if d.opts.Runner != nil {
		return d.opts.Runner
	}
	return jsrun.Isolated()
}
