package config

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// WorkerPresets are the coding-agent CLIs kind workers knows.
var WorkerPresets = []string{"codex", "claude", "gemini", "agy"}

// Workers is the spec of kind workers: a coding-agent CLI run as a worker.
type Workers struct {
	Preset  string            `json:"preset,omitempty" yaml:"preset,omitempty"`
	Command string            `json:"command,omitempty" yaml:"command,omitempty"`
	Args    []string          `json:"args,omitempty" yaml:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty" yaml:"cwd,omitempty"`
}

// Kind implements Spec.
func (*Workers) Kind() string { return "workers" }

var workersKind = kindDef{
	name:    "workers",
	keys:    []string{"preset", "command", "args", "env", "cwd"},
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
	},
	resolve: func(s Spec, c *Config) {
		w := s.(*Workers)
		w.Cwd = c.Resolve(w.Cwd)
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
