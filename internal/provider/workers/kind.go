package workers

import (
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/text"
)

// Name is the kind's name, as written after kind:.
const Name = "workers"

// Presets are the coding-agent CLIs kind workers knows.
var Presets = []string{"codex", "claude", "gemini", "agy"}

// Worker prompt transports, output parsers, isolation modes and job modes.
var (
	PromptTransports = []string{"stdin", "argument", "file"}
	Outputs          = []string{"jsonl", "json", "text"}
	Isolations       = []string{"none", "worktree"}
	Modes            = []string{"analyze", "review", "implement"}
	// Placeholders are the {names} an argv template may use.
	Placeholders = []string{"prompt", "prompt_file", "output_file", "model", "effort", "project", "mode"}
)

// Spec is the spec of kind workers: a coding-agent CLI run as a worker.
type Spec struct {
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
	ShutdownGrace config.Duration `json:"shutdownGrace,omitzero" yaml:"shutdownGrace,omitempty"`
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

// Kind implements config.Spec.
func (*Spec) Kind() string { return Name }

// DecodeField decodes modeArgs, whose keys are the modes.
func (wd *WorkerDef) DecodeField(d *config.Decoder, key string, n *yaml.Node, kp string) bool {
	if key != "modeArgs" {
		return false
	}
	wd.ModeArgs = map[string][]string{}
	d.Mapping(n, kp, Modes, func(mode string, v *yaml.Node, mp string) {
		wd.ModeArgs[mode] = d.StringList(v, mp)
	})
	return true
}

// Kind is the kind workers, for the list of kinds.
var Kind = provider.Kind{
	Kind: config.Kind{
		Name:     Name,
		NewSpec:  func() config.Spec { return &Spec{} },
		Validate: validateSpec,
		Resolve: func(s config.Spec, c *config.Config) {
			w := s.(*Spec)
			w.Cwd = c.Resolve(w.Cwd)
			w.JobLog = c.Resolve(w.JobLog)
		},
		Redact: func(s config.Spec) config.Spec {
			w := *s.(*Spec)
			w.Env = config.RedactMap(w.Env)
			return &w
		},
		DefaultCwd: func(s config.Spec, dir string) {
			if w := s.(*Spec); w.Cwd == "" {
				w.Cwd = dir
			}
		},
	},
	Build: Build,
}

func validateSpec(v *config.Validator, p *config.Provider, pp string) {
	w := p.Spec.(*Spec)
	v.Env(pp, w.Env)
	if !v.Present(pp, "preset", w.Preset != "") && !v.Present(pp, "command", w.Command != "") {
		v.Errf(pp, `kind workers needs "preset" (%s) or "command"`, config.OrList(Presets))
	}
	if w.Preset != "" && !slices.Contains(Presets, w.Preset) && !v.Bad(pp+".preset") {
		v.Errf(pp+".preset", "unknown preset %s (want %s, or set command)", v.Show(pp+".preset", w.Preset), config.OrList(Presets))
	}
	if w.Isolation != "" && !slices.Contains(Isolations, w.Isolation) && !v.Bad(pp+".isolation") {
		v.Errf(pp+".isolation", "unknown isolation %s (want %s)", v.Show(pp+".isolation", w.Isolation), config.OrList(Isolations))
	}
	v.Duration(pp+".shutdownGrace", w.ShutdownGrace)
	nonEmptyUnique(v, pp+".models", w.Models, "model")
	nonEmptyUnique(v, pp+".verify", w.Verify, "verification command")
	if w.Preset == "" {
		validatePlaceholders(v, pp+".args", w.Args)
	}
	if w.Worker != nil {
		if w.Preset != "" && !v.Bad(pp+".preset") {
			v.Keyf(pp+".worker", `"worker" declares a custom worker and does not apply with a preset: drop "preset" or "worker"`)
		}
		validateDef(v, w.Worker, pp+".worker")
	}
}

func validateDef(v *config.Validator, wd *WorkerDef, wp string) {
	if wd.Prompt != "" && !slices.Contains(PromptTransports, wd.Prompt) && !v.Bad(wp+".prompt") {
		v.Errf(wp+".prompt", "unknown prompt transport %s (want %s)", v.Show(wp+".prompt", wd.Prompt), config.OrList(PromptTransports))
	}
	if wd.Output != "" && !slices.Contains(Outputs, wd.Output) && !v.Bad(wp+".output") {
		v.Errf(wp+".output", "unknown output parser %s (want %s)", v.Show(wp+".output", wd.Output), config.OrList(Outputs))
	}
	if wd.Answer != "" && (wd.Output == "" || wd.Output == "text") && !v.Bad(wp+".answer") {
		v.Keyf(wp+".answer", `"answer" is a path into JSON output: set output to json or jsonl`)
	}
	if len(wd.PromptArgs) > 0 && (wd.Prompt == "" || wd.Prompt == "stdin") {
		v.Keyf(wp+".promptArgs", `"promptArgs" needs prompt: argument or file`)
	}
	validatePlaceholders(v, wp+".promptArgs", wd.PromptArgs)
	validatePlaceholders(v, wp+".modelArgs", wd.ModelArgs)
	validatePlaceholders(v, wp+".effortArgs", wd.EffortArgs)
	for _, m := range Modes {
		validatePlaceholders(v, config.KeyPath(wp+".modeArgs", m), wd.ModeArgs[m])
	}
	nonEmptyUnique(v, wp+".efforts", wd.Efforts, "effort")
	if len(wd.Efforts) > 0 && len(wd.EffortArgs) == 0 {
		v.Keyf(wp+".efforts", `"efforts" needs "effortArgs" (how the effort reaches the CLI)`)
	}
}

var templateRE = regexp.MustCompile(`\{([^{}]*)\}`)

// placeholders rejects {names} an argv template cannot expand.
func validatePlaceholders(v *config.Validator, p string, argv []string) {
	for i, a := range argv {
		ip := config.ItemPath(p, i)
		if v.Bad(ip) {
			continue
		}
		known := true
		for _, m := range templateRE.FindAllStringSubmatch(a, -1) {
			if !slices.Contains(Placeholders, m[1]) {
				v.Errf(ip, "unknown placeholder {%s} (want {%s})", text.Clip(m[1], 40), joinPlaceholders())
				known = false
				break
			}
		}
		// Braces are the placeholders' alone: a lone one ("{prompt", a
		// stray "}") is a typo that would reach the CLI verbatim.
		if rest := templateRE.ReplaceAllString(a, ""); known && strings.ContainsAny(rest, "{}") {
			v.Errf(ip, "unbalanced brace in %s: placeholders are {name} (want {%s})", v.Show(ip, a), joinPlaceholders())
		}
	}
}

func joinPlaceholders() string {
	s := ""
	for i, p := range Placeholders {
		if i > 0 {
			s += "}, {"
		}
		s += p
	}
	return s
}

func nonEmptyUnique(v *config.Validator, p string, list []string, what string) {
	seen := map[string]bool{}
	for i, s := range list {
		ip := config.ItemPath(p, i)
		switch {
		case v.Bad(ip):
		case s == "":
			v.Errf(ip, "empty %s name", what)
		case seen[s]:
			v.Errf(ip, "duplicate %s %q", what, text.Clip(s, 40))
		}
		seen[s] = true
	}
}

var _ config.FieldDecoder = (*WorkerDef)(nil)
