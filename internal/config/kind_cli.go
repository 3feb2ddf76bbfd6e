package config

import (
	"slices"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// ParamTypes are the JSON types a declared parameter may have.
var ParamTypes = []string{"string", "boolean", "integer", "number", "array", "object"}

// CLI is the spec of kind cli: allowlisted executables run from argv templates.
type CLI struct {
	Tools []CLITool         `json:"tools,omitempty" yaml:"tools,omitempty"`
	Env   map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	Cwd   string            `json:"cwd,omitempty" yaml:"cwd,omitempty"`
}

// Kind implements Spec.
func (*CLI) Kind() string { return "cli" }

// CLITool declares one tool of a cli provider.
type CLITool struct {
	Name        string           `json:"name" yaml:"name"`
	Description string           `json:"description,omitempty" yaml:"description,omitempty"`
	Argv        []string         `json:"argv" yaml:"argv"`
	Params      map[string]Param `json:"params,omitempty" yaml:"params,omitempty"`
	ReadOnly    bool             `json:"readonly" yaml:"readonly"`
	// Timeout overrides the provider's (0: provider default).
	Timeout Duration `json:"timeout" yaml:"timeout"`
}

// Param is a typed parameter of a CLITool. Type defaults to "string".
type Param struct {
	Type        string   `json:"type" yaml:"type"`
	Description string   `json:"description,omitempty" yaml:"description,omitempty"`
	Required    bool     `json:"required" yaml:"required"`
	Enum        []string `json:"enum,omitempty" yaml:"enum,omitempty"`
}

var (
	toolKeys  = []string{"name", "description", "argv", "params", "readonly", "timeout"}
	paramKeys = []string{"type", "description", "required", "enum"}
)

var cliKind = kindDef{
	name:    "cli",
	keys:    []string{"tools", "env", "cwd"},
	newSpec: func() Spec { return &CLI{} },
	decode: func(d *decoder, s Spec, key string, v *yaml.Node, kp string) {
		c := s.(*CLI)
		switch key {
		case "tools":
			c.Tools = nil
			d.sequence(v, kp, func(_ int, t *yaml.Node, tp string) {
				c.Tools = append(c.Tools, d.cliTool(t, tp))
			})
			if c.Tools == nil {
				c.Tools = []CLITool{}
			}
		case "env":
			c.Env = d.stringMap(v, kp)
		case "cwd":
			d.setStr(&c.Cwd, v, kp)
		}
	},
	validate: func(v *validator, p *Provider, pp string) {
		c := p.Spec.(*CLI)
		v.validateEnv(pp, c.Env)
		if len(c.Tools) == 0 && !v.bad(pp+".tools") {
			if c.Tools == nil {
				v.errf(pp, `kind cli needs "tools" (a list of {name, argv, ...})`)
			} else {
				v.errf(pp+".tools", "must list at least one tool")
			}
		}
		names := map[string]string{}
		for i := range c.Tools {
			tp := index(pp+".tools", i)
			if !v.bad(tp) {
				v.cliTool(&c.Tools[i], tp, names)
			}
		}
	},
	resolve: func(s Spec, cfg *Config) {
		c := s.(*CLI)
		c.Cwd = cfg.Resolve(c.Cwd)
	},
	redact: func(s Spec) Spec {
		c := *s.(*CLI)
		c.Env = redactMap(c.Env)
		return &c
	},
	defaultCwd: func(s Spec, dir string) {
		if c := s.(*CLI); c.Cwd == "" {
			c.Cwd = dir
		}
	},
}

func (d *decoder) cliTool(n *yaml.Node, path string) CLITool {
	var t CLITool
	if n == nil {
		return t
	}
	if isNull(n) || n.Kind != yaml.MappingNode {
		d.meta.bad[path] = true
		d.errAt(n, path, "want a mapping with name and argv, got %s", describe(n))
		return t
	}
	d.mapping(n, path, toolKeys, func(key string, _, v *yaml.Node, kp string) {
		switch key {
		case "name":
			if s, ok := d.str(v, kp, false); ok {
				t.Name = s
			}
		case "description":
			if s, ok := d.str(v, kp, false); ok {
				t.Description = s
			}
		case "argv":
			t.Argv = d.stringList(v, kp)
		case "readonly":
			d.boolean(v, kp, &t.ReadOnly)
		case "timeout":
			d.duration(v, kp, &t.Timeout)
		case "params":
			t.Params = map[string]Param{}
			d.mapping(v, kp, nil, func(name string, _, v *yaml.Node, pp string) {
				prm := Param{Type: "string"}
				d.mapping(v, pp, paramKeys, func(key string, _, v *yaml.Node, fp string) {
					switch key {
					case "type":
						if s, ok := d.str(v, fp, false); ok {
							prm.Type = s
						}
					case "description":
						if s, ok := d.str(v, fp, false); ok {
							prm.Description = s
						}
					case "required":
						d.boolean(v, fp, &prm.Required)
					case "enum":
						prm.Enum = d.stringList(v, fp)
					}
				})
				t.Params[name] = prm
			})
		}
	})
	return t
}

func (v *validator) cliTool(t *CLITool, tp string, names map[string]string) {
	np := tp + ".name"
	switch {
	case v.bad(np):
	case t.Name == "":
		v.errf(tp, `missing required key "name"`)
	case !utf8.ValidString(t.Name):
		v.errf(np, "tool name is not valid UTF-8")
	default:
		if first, dup := names[t.Name]; dup {
			v.errf(np, "duplicate tool name %q%s", clip(t.Name), v.line(first))
		} else {
			names[t.Name] = np
		}
	}
	ap := tp + ".argv"
	switch {
	case v.bad(ap):
	case t.Argv == nil:
		v.errf(tp, `missing required key "argv" (the program and its arguments)`)
	case len(t.Argv) == 0:
		v.errf(ap, "must not be empty: give at least the program")
	case t.Argv[0] == "" && !v.bad(index(ap, 0)):
		v.errf(index(ap, 0), "the program (argv[0]) must not be empty")
	}
	v.duration(tp+".timeout", t.Timeout)
	for name, prm := range t.Params {
		pp := joinKey(tp+".params", name)
		if name == "" {
			v.keyf(pp, "empty parameter name")
		}
		if !slices.Contains(ParamTypes, prm.Type) && !v.bad(pp+".type") {
			v.errf(pp+".type", "unknown type %s (want %s)", v.show(pp+".type", prm.Type), orList(ParamTypes))
		}
		if len(prm.Enum) > 0 && prm.Type != "string" {
			v.keyf(pp+".enum", `"enum" needs type string`)
		}
	}
}
