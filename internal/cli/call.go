package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agent-tools/agent-tools/internal/policy"
	"strings"

	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
)

// cliShape renders the retry of a call as the command to type.
type cliShape struct{}

func (cliShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	cmd := "agent-tools call " + tool
	if len(args) > 0 && string(args) != "{}" {
		cmd += " --args '" + strings.ReplaceAll(string(args), "'", `'\''`) + "'"
	}
	if confirm != nil {
		cmd += " --confirm"
	}
	return map[string]any{"command": cmd}
}

func runCall(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "call", "call NAME [--args '{...}'] [--confirm] [--config FILE] [--json]").withJSON()
	argsJSON := f.String("args", "{}", "the tool's arguments as a JSON object")
	confirm := f.Bool("confirm", false, "confirm a call that changes state")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) != 1 {
		f.Usage()
		return ExitUsage
	}
	if !json.Valid([]byte(*argsJSON)) {
		fmt.Fprintf(env.Stderr, "agent-tools: --args is not valid JSON: %s\n", *argsJSON)
		return ExitUsage
	}
	// Load warnings about other tools (a skipped script, a slow upstream)
	// are said once, after the result, as list does.
	log, flush := deferredLog(env)
	defer flush()
	a, code := load(ctx, env, f, log, nil)
	if a == nil {
		return code
	}
	defer a.Close()
	// A person typed --confirm: that is a human confirmation in every mode.
	req := a.Facade.Request(facade.Caller{Session: "cli", Client: "agent-tools-cli", Door: policy.DoorCLI, Via: "cli", Tool: pos[0],
		Args: json.RawMessage(*argsJSON), Shape: cliShape{}, Human: *confirm})
	callCtx, stop := ctx, func() {}
	if env.Progress && !f.json {
		callCtx, stop = progressLine(ctx, env.Stderr, pos[0], env.ProgressEvery)
	}
	resp := a.Call(callCtx, req)
	stop()
	if f.json {
		out := map[string]any{"ok": !resp.Failed()}
		if resp.Err != nil {
			out["error"] = resp.Err.Body()["error"]
		} else if resp.Result != nil {
			out["result"] = resp.Result.Text
			if resp.Result.Structured != nil {
				out["structuredContent"] = resp.Result.Structured
			}
		}
		writeJSON(env.Stdout, out)
	} else if resp.Err != nil {
		printError(env, resp)
	} else {
		fmt.Fprint(env.Stdout, printable(resp.Result.Text))
		if !strings.HasSuffix(resp.Result.Text, "\n") {
			fmt.Fprintln(env.Stdout)
		}
	}
	if resp.Failed() {
		return ExitFailed
	}
	return ExitOK
}

// printError shows an error for a person: code and message, the hint, the
// tool's own output if any, and the command that fixes it when we know it.
func printError(env *Env, resp *pipeline.Response) {
	e := resp.Err
	if out, ok := e.Details["output"].(string); ok && out != "" {
		fmt.Fprint(env.Stdout, printable(out))
		if !strings.HasSuffix(out, "\n") {
			fmt.Fprintln(env.Stdout)
		}
	}
	fmt.Fprintf(env.Stderr, "error %s: %s\n", e.Code, printable(e.Message))
	if e.Hint != "" {
		fmt.Fprintf(env.Stderr, "hint: %s\n", printable(e.Hint))
	}
	if s, ok := e.Details["did_you_mean"].([]string); ok && len(s) > 0 {
		fmt.Fprintf(env.Stderr, "did you mean: %s\n", printable(strings.Join(s, ", ")))
	}
	for _, k := range []string{"retry", "correct_shape"} {
		if m, ok := e.Details[k].(map[string]any); ok {
			if c, ok := m["command"].(string); ok {
				fmt.Fprintf(env.Stderr, "run: %s\n", printable(c))
			}
		}
	}
	if ps, ok := e.Details["problems"].([]pipeline.Problem); ok {
		for _, p := range ps {
			fmt.Fprintf(env.Stderr, "  %s: %s\n", printable(p.Path), printable(p.Message))
		}
	}
}
