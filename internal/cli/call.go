package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agent-tools/agent-tools/internal/policy"

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
	f := newFlags(env, "call", "call NAME [key=value ...] [--args '{...}'] [--confirm] [--config FILE] [--json]").withJSON()
	argsJSON := f.String("args", "{}", "the tool's arguments as a JSON object (or give them as key=value pairs after NAME)")
	confirm := f.Bool("confirm", false, "confirm a call that changes state")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) == 0 {
		f.Usage()
		return ExitUsage
	}
	// key=value pairs, as text mode reads them: typed by the tool's schema
	// once it is loaded; key:=<json> for arrays and objects.
	pairs := pos[1:]
	if len(pairs) > 0 && flagSet(f, "args") {
		fmt.Fprintln(env.Stderr, "agent-tools: give the arguments either as key=value pairs or as --args '{...}', not both")
		return ExitUsage
	}
	if _, err := facade.PairArguments(pairs, nil); err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: %v: after the tool's name come its arguments as key=value pairs (%s), key:=<json> for arrays and objects, or --args '{...}'\n",
			err, "agent-tools call "+pos[0]+" count=2")
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
	callArgs := json.RawMessage(*argsJSON)
	if len(pairs) > 0 {
		var schema json.RawMessage
		if t, ok := a.Registry().Lookup(pos[0]); ok {
			schema = t.InputSchema
		}
		var err error
		if callArgs, err = facade.PairArguments(pairs, schema); err != nil {
			fmt.Fprintf(env.Stderr, "agent-tools: %v (%s)\n", err, "key:=<json> passes a value as JSON")
			return ExitUsage
		}
	}
	// A person typed --confirm: that is a human confirmation in every mode.
	req := a.Facade.Request(facade.Caller{Session: "cli", Client: "agent-tools-cli", Door: policy.DoorCLI, Via: "cli", Tool: pos[0],
		Args: callArgs, Shape: cliShape{}, Human: *confirm})
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
// Errors are written for a model, naming the envelope's fields (`retry`,
// correct_shape, expected_schema, did_you_mean); here each field the text
// names is rendered (the command to run, the tool's arguments, the names)
// and the text says "below" instead (forPerson).
func printError(env *Env, resp *pipeline.Response) {
	e := resp.Err
	out, _ := e.Details["output"].(string)
	if out != "" {
		fmt.Fprint(env.Stdout, printable(out))
		if !strings.HasSuffix(out, "\n") {
			fmt.Fprintln(env.Stdout)
		}
	}
	var run string
	for _, k := range []string{"retry", "correct_shape"} {
		if m, ok := e.Details[k].(map[string]any); ok && run == "" {
			run, _ = m["command"].(string)
		}
	}
	names, _ := e.Details["did_you_mean"].([]string)
	schema := schemaLines(e.Details["expected_schema"])
	say := func(s string) string {
		return printable(forPerson(s, run != "", len(names) > 0, len(schema) > 0, out != ""))
	}
	fmt.Fprintf(env.Stderr, "error %s: %s\n", e.Code, say(e.Message))
	if e.Hint != "" {
		fmt.Fprintf(env.Stderr, "hint: %s\n", say(e.Hint))
	}
	if len(names) > 0 {
		fmt.Fprintf(env.Stderr, "did you mean: %s\n", printable(strings.Join(names, ", ")))
	}
	if ps, ok := e.Details["problems"].([]pipeline.Problem); ok {
		for _, p := range ps {
			fmt.Fprintf(env.Stderr, "  %s: %s\n", printable(p.Path), printable(p.Message))
		}
	}
	if len(schema) > 0 {
		fmt.Fprintln(env.Stderr, "arguments:")
		for _, l := range schema {
			fmt.Fprintf(env.Stderr, "  %s\n", printable(l))
		}
	}
	if run != "" {
		fmt.Fprintf(env.Stderr, "run: %s\n", printable(run))
	}
}

// personPhrases reword what errors tell a model for a person at a
// terminal, where the fields they name are rendered below the message.
var personPhrases = []struct{ model, person string }{
	{"repeat the exact call in `retry` (it adds the confirmation)", "run the command below (it adds --confirm)"},
	{"; the token in `retry` confirms this exact call once, with these arguments", ""},
	{"If the user wants this change", "If you want this change"},
	{"Fix the listed arguments to match expected_schema and call again; do not repeat the same arguments.", "Fix the arguments listed below to match the tool's arguments and run it again."},
	{"Fix the argument to match expected_schema and call again.", "Fix the argument to match the tool's arguments below and run it again."},
	{"Use a name from did_you_mean, or search for the right tool first.", "Use one of the names below, or find the tool with `agent-tools search <what it does>`."},
	{"Use a name from did_you_mean", "Use one of the names below"},
	{"Make the call in correct_shape: ", "Run the command below: "},
	{"make the call in correct_shape", "run the command below"},
	{"as correct_shape shows", "as the command below shows"},
	{"read `output`", "read its output above"},
}

// forPerson rewords s (forPerson's table, then any field name left) for
// the fields that are shown: the command to run, the names, the tool's
// arguments, the tool's output.
func forPerson(s string, run, names, schema, output bool) string {
	for _, p := range personPhrases {
		s = strings.ReplaceAll(s, p.model, p.person)
	}
	for field, shown := range map[string]struct {
		person string
		shown  bool
	}{
		"`retry`": {"the command below", run}, "correct_shape": {"the command below", run},
		"did_you_mean": {"the names below", names}, "expected_schema": {"the tool's arguments below", schema},
		"`output`": {"its output above", output},
	} {
		if !shown.shown {
			shown.person = strings.TrimSuffix(strings.TrimSuffix(shown.person, " below"), " above")
		}
		s = strings.ReplaceAll(s, field, shown.person)
	}
	return s
}

// schemaLines renders a tool's input schema for a person: one line per
// argument, required ones first, with its type, default and description.
func schemaLines(v any) []string {
	var raw []byte
	switch s := v.(type) {
	case json.RawMessage:
		raw = s
	case nil:
		return nil
	default:
		raw, _ = json.Marshal(s)
	}
	var schema struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Default     any    `json:"default"`
			Enum        []any  `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &schema) != nil {
		return nil
	}
	if len(schema.Properties) == 0 {
		return []string{"(none)"}
	}
	names := make([]string, 0, len(schema.Properties))
	for k := range schema.Properties {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := slices.Contains(schema.Required, names[i]), slices.Contains(schema.Required, names[j])
		if ri != rj {
			return ri
		}
		return names[i] < names[j]
	})
	out := make([]string, 0, len(names))
	for _, k := range names {
		p := schema.Properties[k]
		var what []string
		if t, ok := p.Type.(string); ok {
			what = append(what, t)
		} else if p.Type != nil {
			b, _ := json.Marshal(p.Type)
			what = append(what, string(b))
		}
		if slices.Contains(schema.Required, k) {
			what = append(what, "required")
		}
		if len(p.Enum) > 0 {
			b, _ := json.Marshal(p.Enum)
			what = append(what, "one of "+string(b))
		}
		if p.Default != nil {
			b, _ := json.Marshal(p.Default)
			what = append(what, "default "+string(b))
		}
		line := k + " (" + strings.Join(what, ", ") + ")"
		if p.Description != "" {
			line += ": " + oneLine(p.Description, 100)
		}
		out = append(out, line)
	}
	return out
}
