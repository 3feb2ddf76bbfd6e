package config

import (
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// WorkerPresets are the coding-agent CLIs kind workers knows.
var WorkerPresets = []string{"codex", "claude", "gemini", "agy"}

// Worker prompt transports, output parsers, isolation modes and job modes.
var (
	WorkerPromptTransports = []string{"stdin", "argument", "file"}
	WorkerOutputs          = []string{"jsonl", "json", "text"}
	WorkerIsolations       = []string{"none", "worktree"}
	WorkerModes            = []string{"analyze", "review", "implement"}
	// WorkerPlaceholders are the {names} an argv template may use.
	WorkerPlaceholders = []string{"prompt", "prompt_file", "output_file", "model", "effort", "project", "mode"}
)

// Workers is the spec of kind workers: a coding-agent CLI run as a worker.
type Workers struct {
	Preset string `json:"preset,omitempty" yaml:"preset,omitempty"`
	// Command overrides the preset's binary (or names the custom worker's).
	Command string `json:"command,omitempty" yaml:"command,omitempty"`
	// Args are extra arguments after the preset's own; for a custom worker
	// (no preset) they are its argv template.
	Args []string          `json:"args,omitempty" yaml:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	// Cwd is the project root the worker is scoped to ("" = the runtime's project).
	Cwd string `json:"cwd,omitempty" yaml:"cwd,omitempty"`
	// Models is what may be routed here (empty: whatever the CLI offers).
	Models []string `json:"models,omitempty" yaml:"models,omitempty"`
	// Isolation "worktree" runs implement jobs in their own git worktree.
	Isolation string `json:"isolation,omitempty" yaml:"isolation,omitempty"`
	// ShutdownGrace is how long a running job may finish on shutdown before
	// it is cancelled (0 = the provider's default).
	ShutdownGrace Duration `json:"shutdownGrace,omitzero" yaml:"shutdownGrace,omitempty"`
	// JobLog is a JSONL file of finished jobs ("" = the provider's logger only).
	JobLog string `json:"jobLog,omitempty" yaml:"jobLog,omitempty"`
	// Verify are the verification commands of implement jobs (one program
	// with its arguments each, run without a shell). A call's own
	// verify_commands need a person's approval; these do not.
	Verify []string `json:"verify,omitempty" yaml:"verify,omitempty"`
	// Debug also logs prompts and outputs in the job log.
	Debug bool `json:"debug,omitempty" yaml:"debug,omitempty"`
	// Worker declares a custom worker's protocol (no preset).
	Worker *WorkerDef `json:"worker,omitempty" yaml:"worker,omitempty"`
}

// WorkerDef is the declarative protocol of a custom worker CLI.
type WorkerDef struct {
	// Prompt is how the prompt travels: stdin (default), argument or file.
	Prompt string `json:"prompt,omitempty" yaml:"prompt,omitempty"`
	// PromptArgs carry the prompt for argument/file transports
	// (default ["{prompt}"] or ["{prompt_file}"]).
	PromptArgs []string `json:"promptArgs,omitempty" yaml:"promptArgs,omitempty"`
	// Output is the parser: jsonl, json or text (default).
	Output string `json:"output,omitempty" yaml:"output,omitempty"`
	// Answer is the dotted path of the final answer in the JSON object (or in
	// the last JSONL event that has it); "" for text output.
	Answer string `json:"answer,omitempty" yaml:"answer,omitempty"`
	// ModeArgs are added per mode (analyze, review, implement).
	ModeArgs map[string][]string `json:"modeArgs,omitempty" yaml:"modeArgs,omitempty"`
	// ModelArgs and EffortArgs are added only when a model / effort is asked.
	ModelArgs  []string `json:"modelArgs,omitempty" yaml:"modelArgs,omitempty"`
	EffortArgs []string `json:"effortArgs,omitempty" yaml:"effortArgs,omitempty"`
	// Efforts are the efforts the CLI accepts (empty with EffortArgs: unverified).
	Efforts []string `json:"efforts,omitempty" yaml:"efforts,omitempty"`
}

// Kind implements Spec.
func (*Workers) Kind() string { return "workers" }

var workerDefKeys = []string{"prompt", "promptArgs", "output", "answer", "modeArgs", "modelArgs", "effortArgs", "efforts"}

var workersKind = kindDef{
	name: "workers",
	keys: []string{"preset", "command", "args", "env", "cwd", "models", "isolation", "shutdownGrace",
		"jobLog", "verify", "debug", "worker"},
	newSpec: func() Spec { return &Workers{} },
	decode: func(d *decoder, s Spec, key string, v *yaml.Node, kp string) {
		w := s.(*Workers)
		switch key {
		case "preset":
			d.setStr(&w.Preset, v, kp)
		case "command":
			d.setStr(&w.Command, v, kp)
		case "args":
			w.Args = d.stringList(v, kp)
		case "env":
			w.Env = d.stringMap(v, kp)
		case "cwd":
			d.setStr(&w.Cwd, v, kp)
		case "models":
			w.Models = d.stringList(v, kp)
		case "isolation":
			d.setStr(&w.Isolation, v, kp)
		case "shutdownGrace":
			d.duration(v, kp, &w.ShutdownGrace)
		case "jobLog":
			d.setStr(&w.JobLog, v, kp)
		case "verify":
			w.Verify = d.stringList(v, kp)
		case "debug":
			d.boolean(v, kp, &w.Debug)
		case "worker":
			w.Worker = d.workerDef(v, kp)
		}
	},
	validate: func(v *validator, p *Provider, pp string) {
		w := p.Spec.(*Workers)
		v.validateEnv(pp, w.Env)
		if !v.present(pp, "preset", w.Preset != "") && !v.present(pp, "command", w.Command != "") {
			v.errf(pp, `kind workers needs "preset" (%s) or "command"`, orList(WorkerPresets))
		}
		if w.Preset != "" && !slices.Contains(WorkerPresets, w.Preset) && !v.bad(pp+".preset") {
			v.errf(pp+".preset", "unknown preset %s (want %s, or set command)", v.show(pp+".preset", w.Preset), orList(WorkerPresets))
		}
		if w.Isolation != "" && !slices.Contains(WorkerIsolations, w.Isolation) && !v.bad(pp+".isolation") {
			v.errf(pp+".isolation", "unknown isolation %s (want %s)", v.show(pp+".isolation", w.Isolation), orList(WorkerIsolations))
		}
		v.duration(pp+".shutdownGrace", w.ShutdownGrace)
		v.nonEmptyUnique(pp+".models", w.Models, "model")
		v.nonEmptyUnique(pp+".verify", w.Verify, "verification command")
		if w.Preset == "" {
			v.placeholders(pp+".args", w.Args)
		}
		if w.Worker != nil {
			if w.Preset != "" && !v.bad(pp+".preset") {
				v.keyf(pp+".worker", `"worker" declares a custom worker and does not apply with a preset: drop "preset" or "worker"`)
			}
			v.workerDef(w.Worker, pp+".worker")
		}
	},
	resolve: func(s Spec, c *Config) {
		w := s.(*Workers)
		w.Cwd = c.Resolve(w.Cwd)
		w.JobLog = c.Resolve(w.JobLog)
	},
	redact: func(s Spec) Spec {
		w := *s.(*Workers)
		w.Env = redactMap(w.Env)
		return &w
	},
	defaultCwd: func(s Spec, dir string) {
		if w := s.(*Workers); w.Cwd == "" {
			w.Cwd = dir
		}
	},
}

func (d *decoder) workerDef(n *yaml.Node, path string) *WorkerDef {
	wd := &WorkerDef{}
	if !d.mapping(n, path, workerDefKeys, func(key string, _, v *yaml.Node, kp string) {
		switch key {
		case "prompt":
			d.setStr(&wd.Prompt, v, kp)
		case "promptArgs":
			wd.PromptArgs = d.stringList(v, kp)
		case "output":
			d.setStr(&wd.Output, v, kp)
		case "answer":
			d.setStr(&wd.Answer, v, kp)
		case "modelArgs":
			wd.ModelArgs = d.stringList(v, kp)
		case "effortArgs":
			wd.EffortArgs = d.stringList(v, kp)
		case "efforts":
			wd.Efforts = d.stringList(v, kp)
		case "modeArgs":
			wd.ModeArgs = map[string][]string{}
			d.mapping(v, kp, WorkerModes, func(mode string, _, v *yaml.Node, mp string) {
				wd.ModeArgs[mode] = d.stringList(v, mp)
			})
		}
	}) {
		return nil // null is absent; a non-mapping was reported
	}
	return wd
}

func (v *validator) workerDef(wd *WorkerDef, wp string) {
	if wd.Prompt != "" && !slices.Contains(WorkerPromptTransports, wd.Prompt) && !v.bad(wp+".prompt") {
		v.errf(wp+".prompt", "unknown prompt transport %s (want %s)", v.show(wp+".prompt", wd.Prompt), orList(WorkerPromptTransports))
	}
	if wd.Output != "" && !slices.Contains(WorkerOutputs, wd.Output) && !v.bad(wp+".output") {
		v.errf(wp+".output", "unknown output parser %s (want %s)", v.show(wp+".output", wd.Output), orList(WorkerOutputs))
	}
	if wd.Answer != "" && (wd.Output == "" || wd.Output == "text") && !v.bad(wp+".answer") {
		v.keyf(wp+".answer", `"answer" is a path into JSON output: set output to json or jsonl`)
	}
	if len(wd.PromptArgs) > 0 && (wd.Prompt == "" || wd.Prompt == "stdin") {
		v.keyf(wp+".promptArgs", `"promptArgs" needs prompt: argument or file`)
	}
	v.placeholders(wp+".promptArgs", wd.PromptArgs)
	v.placeholders(wp+".modelArgs", wd.ModelArgs)
	v.placeholders(wp+".effortArgs", wd.EffortArgs)
	for _, m := range WorkerModes {
		v.placeholders(joinKey(wp+".modeArgs", m), wd.ModeArgs[m])
	}
	v.nonEmptyUnique(wp+".efforts", wd.Efforts, "effort")
	if len(wd.Efforts) > 0 && len(wd.EffortArgs) == 0 {
		v.keyf(wp+".efforts", `"efforts" needs "effortArgs" (how the effort reaches the CLI)`)
	}
}

var placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)

// placeholders rejects {names} an argv template cannot expand.
func (v *validator) placeholders(p string, argv []string) {
	for i, a := range argv {
		ip := index(p, i)
		if v.bad(ip) {
			continue
		}
		known := true
		for _, m := range placeholderRE.FindAllStringSubmatch(a, -1) {
			if !slices.Contains(WorkerPlaceholders, m[1]) {
				v.errf(ip, "unknown placeholder {%s} (want {%s})", clip(m[1]), joinPlaceholders())
				known = false
				break
			}
		}
		// Braces are the placeholders' alone: a lone one ("{prompt", a
		// stray "}") is a typo that would reach the CLI verbatim.
		if rest := placeholderRE.ReplaceAllString(a, ""); known && strings.ContainsAny(rest, "{}") {
			v.errf(ip, "unbalanced brace in %s: placeholders are {name} (want {%s})", v.show(ip, a), joinPlaceholders())
		}
	}
}

func joinPlaceholders() string {
	s := ""
	for i, p := range WorkerPlaceholders {
		if i > 0 {
			s += "}, {"
		}
		s += p
	}
	return s
}

func (v *validator) nonEmptyUnique(p string, list []string, what string) {
	seen := map[string]bool{}
	for i, s := range list {
		ip := index(p, i)
		switch {
		case v.bad(ip):
		case s == "":
			v.errf(ip, "empty %s name", what)
		case seen[s]:
			v.errf(ip, "duplicate %s %q", what, clip(s))
		}
		seen[s] = true
	}
}
