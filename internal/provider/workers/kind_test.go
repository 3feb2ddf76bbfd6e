package workers_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider/workers"
	"github.com/agent-tools/agent-tools/internal/tests/configtest"
)

// The issue's YAML, kept exactly.
const issueWorkersYAML = `providers:
  - id: codex
    kind: workers
    preset: codex
    models: [gpt-5.6-sol, gpt-5.6-luna]   # optional: what may be routed here
    timeout: 30m
    # command: /opt/codex/bin/codex     # overrides the preset's binary
`

func TestWorkersIssueYAML(t *testing.T) {
	c, err := configtest.Parse(t, issueWorkersYAML)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Providers[0]
	w := p.Spec.(*workers.Spec)
	if w.Preset != "codex" || !slices.Equal(w.Models, []string{"gpt-5.6-sol", "gpt-5.6-luna"}) || p.Timeout.Duration != 30*time.Minute {
		t.Fatalf("decoded %+v timeout %v", w, p.Timeout)
	}
}

func TestWorkersAllKeys(t *testing.T) {
	src := `providers:
  - id: mine
    kind: workers
    command: /opt/bin/agent
    args: [run, --project, "{project}"]
    env: {AGENT_LEVEL: "3"}
    cwd: sub
    models: [m1]
    isolation: worktree
    shutdownGrace: 20s
    jobLog: logs/jobs.jsonl
    verify: ["go test ./...", "make lint"]
    debug: true
    worker:
      prompt: file
      promptArgs: [--prompt-file, "{prompt_file}"]
      output: jsonl
      answer: item.text
      modeArgs:
        analyze: [--read-only]
        implement: [--write]
      modelArgs: [--model, "{model}"]
      effortArgs: ["--effort={effort}"]
      efforts: [low, high]
`
	c, err := configtest.Parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	w := c.Providers[0].Spec.(*workers.Spec)
	wd := w.Worker
	switch {
	case w.Isolation != "worktree", w.ShutdownGrace.Duration != 20*time.Second, !w.Debug:
		t.Errorf("scalars: %+v", w)
	case w.JobLog != c.Resolve("logs/jobs.jsonl"), w.Cwd != c.Resolve("sub"):
		t.Errorf("paths not resolved: %q %q", w.JobLog, w.Cwd)
	case wd == nil || wd.Prompt != "file" || wd.Output != "jsonl" || wd.Answer != "item.text":
		t.Errorf("worker: %+v", wd)
	case !slices.Equal(w.Verify, []string{"go test ./...", "make lint"}):
		t.Errorf("verify: %q", w.Verify)
	case !slices.Equal(wd.ModeArgs["implement"], []string{"--write"}) || !slices.Equal(wd.Efforts, []string{"low", "high"}):
		t.Errorf("worker lists: %+v", wd)
	}
}

func TestWorkersErrors(t *testing.T) {
	const head = "providers:\n  - id: w\n    kind: workers\n"
	tests := []struct {
		name, src string
		want      []string
	}{
		{"bad isolation", head + "    preset: codex\n    isolation: container\n", []string{
			`agent-tools.yaml:5:16: providers[0].isolation: unknown isolation "container" (want none or worktree)`}},
		{"negative grace", head + "    preset: codex\n    shutdownGrace: -1s\n", []string{
			`agent-tools.yaml:5:20: providers[0].shutdownGrace: must not be negative, got -1s`}},
		{"models empty and duplicate", head + "    preset: codex\n    models: [a, \"\", a]\n", []string{
			`agent-tools.yaml:5:17: providers[0].models[1]: empty model name`,
			`agent-tools.yaml:5:21: providers[0].models[2]: duplicate model "a"`}},
		{"worker with preset", head + "    preset: codex\n    worker: {output: json}\n", []string{
			`agent-tools.yaml:5:5: providers[0].worker: "worker" declares a custom worker and does not apply with a preset: drop "preset" or "worker"`}},
		{"bad transport and parser", head + "    command: x\n    worker: {prompt: pipe, output: xml}\n", []string{
			`agent-tools.yaml:5:22: providers[0].worker.prompt: unknown prompt transport "pipe" (want stdin, argument or file)`,
			`agent-tools.yaml:5:36: providers[0].worker.output: unknown output parser "xml" (want jsonl, json or text)`}},
		{"answer on text", head + "    command: x\n    worker: {answer: result}\n", []string{
			`agent-tools.yaml:5:14: providers[0].worker.answer: "answer" is a path into JSON output: set output to json or jsonl`}},
		{"promptArgs on stdin", head + "    command: x\n    worker: {promptArgs: [\"{prompt}\"]}\n", []string{
			`agent-tools.yaml:5:14: providers[0].worker.promptArgs: "promptArgs" needs prompt: argument or file`}},
		{"unknown placeholder", head + "    command: x\n    args: [\"--x={modle}\"]\n", []string{
			`agent-tools.yaml:5:12: providers[0].args[0]: unknown placeholder {modle} (want {prompt}, {prompt_file}, {output_file}, {model}, {effort}, {project}, {mode})`}},
		{"unbalanced braces", head + "    command: x\n    args: [\"{prompt\", \"a}\", \"{model}{\", \"{{prompt}}\", \"--m={model}\"]\n    worker: {prompt: argument, promptArgs: [\"-p\", \"{prompt_file\"]}\n", []string{
			`agent-tools.yaml:5:12: providers[0].args[0]: unbalanced brace in "{prompt": placeholders are {name} (want {prompt}, {prompt_file}, {output_file}, {model}, {effort}, {project}, {mode})`,
			`agent-tools.yaml:5:23: providers[0].args[1]: unbalanced brace in "a}": placeholders are {name} (want {prompt}, {prompt_file}, {output_file}, {model}, {effort}, {project}, {mode})`,
			`agent-tools.yaml:5:29: providers[0].args[2]: unbalanced brace in "{model}{": placeholders are {name} (want {prompt}, {prompt_file}, {output_file}, {model}, {effort}, {project}, {mode})`,
			`agent-tools.yaml:5:41: providers[0].args[3]: unbalanced brace in "{{prompt}}": placeholders are {name} (want {prompt}, {prompt_file}, {output_file}, {model}, {effort}, {project}, {mode})`,
			`agent-tools.yaml:6:51: providers[0].worker.promptArgs[1]: unbalanced brace in "{prompt_file": placeholders are {name} (want {prompt}, {prompt_file}, {output_file}, {model}, {effort}, {project}, {mode})`}},
		{"unknown mode", head + "    command: x\n    worker:\n      modeArgs: {plan: [--plan]}\n", []string{
			`agent-tools.yaml:6:18: providers[0].worker.modeArgs: unknown key "plan" (want analyze, review or implement)`}},
		{"efforts without effortArgs", head + "    command: x\n    worker: {efforts: [low]}\n", []string{
			`agent-tools.yaml:5:14: providers[0].worker.efforts: "efforts" needs "effortArgs" (how the effort reaches the CLI)`}},
		{"worker not a mapping", head + "    command: x\n    worker: [a]\n", []string{
			`agent-tools.yaml:5:13: providers[0].worker: want a mapping, got a list`}},
		{"unknown worker key", head + "    command: x\n    worker: {answr: x}\n", []string{
			`agent-tools.yaml:5:14: providers[0].worker: unknown key "answr"; did you mean "answer"?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := configtest.Parse(t, tt.src)
			got := configtest.ErrorsOf(t, err)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", join(got), join(tt.want))
			}
		})
	}
}

func join(l []string) string {
	s := ""
	for _, x := range l {
		s += "  " + x + "\n"
	}
	return s
}

func TestWorkersRedactsEnv(t *testing.T) {
	c, err := configtest.Parse(t, "providers:\n  - id: w\n    kind: workers\n    preset: claude\n    env: {TOKEN: secret-value}\n")
	if err != nil {
		t.Fatal(err)
	}
	r := c.Redacted().Providers[0].Spec.(*workers.Spec)
	if r.Env["TOKEN"] == "secret-value" || c.Providers[0].Spec.(*workers.Spec).Env["TOKEN"] != "secret-value" {
		t.Fatalf("redaction: %v", r.Env)
	}
}
