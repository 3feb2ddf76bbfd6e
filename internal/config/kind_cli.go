package config

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/provider/cli/argv"
)

// ParamTypes are the JSON types a declared parameter may have.
var ParamTypes = []string{"string", "boolean", "integer", "number", "array", "object"}

// ItemTypes are the types an array parameter's items may have.
var ItemTypes = []string{"string", "integer", "number", "boolean"}

// CLI is the spec of kind cli: allowlisted executables run from argv
// templates (the template language is package argv's).
type CLI struct {
	// Allow lists the executables the tools may run, as argv[0] spells them:
	// a name looked up in PATH when the provider is built, or a path (relative
	// to the config's directory). Absent, it is the programs the tools name.
	// A program that is not found is reported by doctor, not here.
	Allow []string          `json:"allow,omitempty" yaml:"allow,omitempty"`
	Tools []CLITool         `json:"tools,omitempty" yaml:"tools,omitempty"`
	Env   map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	// Cwd is the tools' working directory, inside the config's directory
	// (default: the config's directory itself).
	Cwd string `json:"cwd,omitempty" yaml:"cwd,omitempty"`
	// Version marks, per allowed program (as Allow spells it), the arguments
	// doctor may run it with to read its version (e.g. git: [--version]).
	// Doctor runs no program without one: an allowlisted program is run
	// only as its tools declare, or as declared here.
	Version map[string][]string `json:"version,omitempty" yaml:"version,omitempty"`
	// Root is the directory every cwd must stay inside: the config's
	// directory (a plugin's own directory for a plugin). Set by Load.
	Root string `json:"-" yaml:"-"`
}

// Programs returns the allowed programs: Allow, or the argv[0] of each tool
// when Allow is absent, without duplicates, in order.
func (c *CLI) Programs() []string {
	src := c.Allow
	if src == nil {
		for _, t := range c.Tools {
			if len(t.Argv) > 0 {
				src = append(src, t.Argv[0])
			}
		}
	}
	var out []string
	for _, p := range src {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
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
	// Cwd overrides the provider's working directory ("" = the provider's);
	// relative to the config's directory, and inside it.
	Cwd string `json:"cwd,omitempty" yaml:"cwd,omitempty"`
}

// Param is a typed parameter of a CLITool. Type defaults to "string".
type Param struct {
	Type        string   `json:"type" yaml:"type"`
	Description string   `json:"description,omitempty" yaml:"description,omitempty"`
	Required    bool     `json:"required" yaml:"required"`
	Enum        []string `json:"enum,omitempty" yaml:"enum,omitempty"`
	// Default is used when the argument is absent, and shown in the schema:
	// a string, bool, int64, float64, []any or map[string]any; nil = none.
	Default any `json:"default,omitempty" yaml:"default,omitempty"`
	// Items is the type of an array's items (ItemTypes; "" = string).
	Items string `json:"items,omitempty" yaml:"items,omitempty"`
}

var (
	toolKeys  = []string{"name", "description", "argv", "params", "readonly", "timeout", "cwd"}
	paramKeys = []string{"type", "description", "required", "enum", "default", "items"}
)

var cliKind = kindDef{
	name:    "cli",
	keys:    []string{"allow", "tools", "env", "cwd", "version"},
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
		case "allow":
			c.Allow = d.stringList(v, kp)
			if c.Allow == nil && !d.meta.bad[kp] {
				c.Allow = []string{} // given but empty: nothing is allowed
			}
		case "version":
			c.Version = map[string][]string{}
			d.mapping(v, kp, nil, func(prog string, _, v *yaml.Node, pp string) {
				c.Version[prog] = d.stringList(v, pp)
			})
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
		allowOK := v.cliAllow(c, pp)
		v.cwd(pp+".cwd", c.Cwd)
		for _, prog := range slices.Sorted(maps.Keys(c.Version)) {
			vp := joinKey(pp+".version", prog)
			switch {
			case v.bad(vp):
			case !slices.Contains(c.Programs(), prog):
				v.keyf(vp, "version names %q, which is not an allowed program (%s)", clip(prog), orList(c.Programs()))
			case len(c.Version[prog]) == 0:
				v.errf(vp, "version needs the arguments that print the version, e.g. [--version]")
			}
		}
		names := map[string]string{}
		for i := range c.Tools {
			tp := index(pp+".tools", i)
			if !v.bad(tp) {
				v.cliTool(c, allowOK, &c.Tools[i], tp, names)
			}
		}
		for i, r := range p.ReadOnly {
			if _, ok := names[r]; !ok && r != "" && len(names) > 0 && !v.bad(index(pp+".readonly", i)) {
				v.errf(index(pp+".readonly", i), "readonly names %s, which is not a tool of this provider (%s)", v.show(index(pp+".readonly", i), r), orList(sortedKeys(names)))
			}
		}
	},
	resolve: func(s Spec, cfg *Config) {
		c := s.(*CLI)
		c.Root = cfg.Dir
		c.Cwd = cfg.Resolve(c.Cwd)
		if c.Cwd == "" {
			c.Cwd = cfg.Dir
		}
		for i := range c.Tools {
			c.Tools[i].Cwd = cfg.Resolve(c.Tools[i].Cwd)
		}
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
		case "cwd":
			if s, ok := d.str(v, kp, false); ok {
				t.Cwd = s
			}
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
					case "default":
						prm.Default = d.value(v, fp)
					case "items":
						if s, ok := d.str(v, fp, false); ok {
							prm.Items = s
						}
					}
				})
				t.Params[name] = prm
			})
		}
	})
	return t
}

// value decodes a literal YAML value (a parameter's default) into JSON
// types. Strings may not reference the environment: a default is shown to
// the model in the tool's schema.
func (d *decoder) value(n *yaml.Node, path string) any {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			ip := index(path, i)
			if e = d.resolve(e, ip); e == nil {
				return nil
			}
			d.meta.val[ip] = pos(e)
			out = append(out, d.value(e, ip))
			if d.meta.bad[ip] {
				d.meta.bad[path] = true
			}
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		d.mapping(n, path, nil, func(key string, _, v *yaml.Node, kp string) {
			out[key] = d.value(v, kp)
			if d.meta.bad[kp] {
				d.meta.bad[path] = true
			}
		})
		return out
	case yaml.ScalarNode:
	default:
		d.errAt(n, path, "want a value, got %s", describe(n))
		return nil
	}
	switch n.Tag {
	case "!!str":
		s, ok := d.str(n, path, false)
		if vars := d.meta.vars[path]; len(vars) > 0 {
			d.errAt(n, path, "a default is shown to the model in the tool's schema, so it cannot come from the environment (%s)", strings.TrimPrefix(from(vars), "the value of "))
			return nil
		}
		if !ok {
			return nil
		}
		return s
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i
		}
		d.errAt(n, path, "integer %s out of range", clip(n.Value))
		return nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
		d.errAt(n, path, "%s is not a number JSON can hold", clip(n.Value))
		return nil
	}
	d.errAt(n, path, "unsupported value %s", clip(n.Value))
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cliAllow checks the allow list's entries; ok is false when one is bad
// (tools are then not checked against it).
func (v *validator) cliAllow(c *CLI, pp string) (ok bool) {
	ok = !v.bad(pp + ".allow")
	for i, a := range c.Allow {
		ip := index(pp+".allow", i)
		switch {
		case v.bad(ip):
			ok = false
		case a == "":
			v.errf(ip, "empty program name")
			ok = false
		case strings.IndexByte(a, 0) >= 0:
			v.errf(ip, "program name contains a NUL byte")
			ok = false
		}
	}
	return ok
}

// cwd checks that a working directory stays inside the config's directory.
func (v *validator) cwd(p, dir string) {
	if dir == "" || v.bad(p) {
		return
	}
	inside := false
	switch {
	case !filepath.IsAbs(dir):
		inside = filepath.IsLocal(filepath.Clean(dir))
	case v.c.Dir == "":
		inside = true // a config built in code: nothing to be inside of
	default:
		rel, err := filepath.Rel(v.c.Dir, dir)
		inside = err == nil && filepath.IsLocal(rel)
	}
	if !inside {
		v.errf(p, "cwd %s is outside the config's directory: cli tools run inside the project", v.show(p, dir))
	}
}

func (v *validator) cliTool(c *CLI, allowOK bool, t *CLITool, tp string, names map[string]string) {
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
	argvOK := false
	switch {
	case v.bad(ap):
	case t.Argv == nil:
		v.errf(tp, `missing required key "argv" (the program and its arguments)`)
	case len(t.Argv) == 0:
		v.errf(ap, "must not be empty: give at least the program")
	case t.Argv[0] == "" && !v.bad(index(ap, 0)):
		v.errf(index(ap, 0), "the program (argv[0]) must not be empty")
	default:
		argvOK = true
	}
	v.duration(tp+".timeout", t.Timeout)
	v.cwd(tp+".cwd", t.Cwd)
	typed := map[string]argv.Param{}
	for name, prm := range t.Params {
		pp := joinKey(tp+".params", name)
		switch {
		case name == "":
			v.keyf(pp, "empty parameter name")
		case !argv.ValidName(name):
			v.keyf(pp, "invalid parameter name %q: use letters, digits, _ and -, starting with a letter or _ (a template writes it {name})", clip(name))
		}
		badType := !slices.Contains(ParamTypes, prm.Type)
		if badType && !v.bad(pp+".type") {
			v.errf(pp+".type", "unknown type %s (want %s)", v.show(pp+".type", prm.Type), orList(ParamTypes))
		}
		if len(prm.Enum) > 0 && prm.Type != "string" {
			v.keyf(pp+".enum", `"enum" needs type string`)
		}
		if badType {
			typed[name] = argv.Param{Type: prm.Type}
			continue
		}
		switch {
		case prm.Items == "" || v.bad(pp+".items"):
		case prm.Type != "array":
			v.keyf(pp+".items", `"items" needs type array`)
		case !slices.Contains(ItemTypes, prm.Items):
			v.errf(pp+".items", "unknown item type %s (want %s)", v.show(pp+".items", prm.Items), orList(ItemTypes))
		}
		if prm.Default != nil && !v.bad(pp+".default") {
			switch msg := defaultProblem(prm); {
			case prm.Required:
				v.keyf(pp+".default", "a required parameter never uses its default: drop one of them")
			case msg != "":
				v.errf(pp+".default", "%s", msg)
			}
		}
		typed[name] = argv.Param{Type: prm.Type, Items: prm.Items, Required: prm.Required}
	}
	if argvOK {
		v.cliArgv(c, allowOK, t, ap, typed)
	}
}

// cliArgv checks a tool's argv template against its parameters and the
// provider's allow list.
func (v *validator) cliArgv(c *CLI, allowOK bool, t *CLITool, ap string, params map[string]argv.Param) {
	tmpl := &argv.Template{}
	ok := true
	for i, s := range t.Argv {
		ep := index(ap, i)
		if v.bad(ep) {
			ok = false
			continue
		}
		e, err := argv.ParseElem(s)
		if err != nil {
			ok = false
			if v.c.meta != nil && len(v.c.meta.vars[ep]) > 0 {
				v.errf(ep, "%s is not a valid argv element: a literal { or } must be doubled", v.show(ep, s))
			} else {
				v.errf(ep, "%s: %v", strconv.Quote(clip(s)), err.(*argv.SyntaxError).Msg)
			}
			continue
		}
		tmpl.Elems = append(tmpl.Elems, e)
	}
	if !ok {
		return
	}
	declared := make([]string, 0, len(params))
	for n := range params {
		declared = append(declared, n)
	}
	sort.Strings(declared)
	for _, p := range tmpl.Check(params) {
		ep := index(ap, p.Index)
		if p.Unknown == "" {
			v.errf(ep, "%s", p.Msg)
			continue
		}
		msg := p.Msg
		if v.c.meta != nil && len(v.c.meta.vars[ep]) > 0 {
			msg = "unknown parameter in " + v.show(ep, "")
		}
		switch s := suggest(p.Unknown, declared); {
		case s != "":
			msg += fmt.Sprintf("; did you mean {%s}?", s)
		case len(declared) == 0:
			msg += " (the tool declares no params)"
		default:
			msg += " (params: " + strings.Join(declared, ", ") + ")"
		}
		v.errf(ep, "%s", msg)
	}
	if c.Allow != nil && allowOK && !slices.Contains(c.Allow, t.Argv[0]) {
		ep := index(ap, 0)
		if len(c.Allow) == 0 {
			v.errf(ep, "program %s is not allowed: this provider's allow list is empty", v.show(ep, t.Argv[0]))
		} else {
			v.errf(ep, "program %s is not in this provider's allow list (%s): add it there, or spell argv[0] exactly as allow does", v.show(ep, t.Argv[0]), strings.Join(c.Allow, ", "))
		}
	}
}

// defaultProblem says why a default does not fit its parameter, or "".
func defaultProblem(p Param) string {
	d := p.Default
	if msg := typeProblem(p.Type, d); msg != "" {
		return msg
	}
	if s, ok := d.(string); ok && len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
		return fmt.Sprintf("default %q is not one of the enum (%s)", clip(s), orList(p.Enum))
	}
	if list, ok := d.([]any); ok {
		items := p.Items
		if items == "" {
			items = "string"
		}
		for i, it := range list {
			if msg := typeProblem(items, it); msg != "" {
				return fmt.Sprintf("item %d: %s", i, msg)
			}
		}
	}
	return ""
}

func typeProblem(typ string, v any) string {
	ok := false
	switch x := v.(type) {
	case string:
		ok = typ == "string"
	case bool:
		ok = typ == "boolean"
	case int64:
		ok = typ == "integer" || typ == "number"
	case float64:
		ok = typ == "number" || typ == "integer" && x == math.Trunc(x)
	case []any:
		ok = typ == "array"
	case map[string]any:
		ok = typ == "object"
	case nil:
		return "null is not a value here"
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("default %s does not have type %s", showValue(v), typ)
}

func showValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(clip(x))
	case []any:
		return "(a list)"
	case map[string]any:
		return "(a mapping)"
	}
	return clip(fmt.Sprint(v))
}
