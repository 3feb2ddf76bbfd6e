package cli

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

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/cli/argv"
	"github.com/agent-tools/agent-tools/internal/text"
)

// Name is the kind's name, as written after kind:.
const Name = "cli"

// ParamTypes are the JSON types a declared parameter may have.
var ParamTypes = []string{"string", "boolean", "integer", "number", "array", "object"}

// ItemTypes are the types an array parameter's items may have.
var ItemTypes = []string{"string", "integer", "number", "boolean"}

// Spec is the spec of kind cli: allowlisted executables run from argv
// templates (the template language is package argv's).
type Spec struct {
	// Allow lists the executables the tools may run, as argv[0] spells them:
	// a name looked up in PATH when the provider is built, or a path (relative
	// to the config's directory). Absent, it is the programs the tools name.
	// A program that is not found is reported by doctor, not here.
	Allow []string          `json:"allow,omitempty" yaml:"allow,omitempty"`
	Tools []Tool            `json:"tools,omitempty" yaml:"tools,omitempty"`
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
func (c *Spec) Programs() []string {
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

// Kind implements config.Spec.
func (*Spec) Kind() string { return Name }

// Tool declares one tool of a cli provider.
type Tool struct {
	Name        string           `json:"name" yaml:"name"`
	Description string           `json:"description,omitempty" yaml:"description,omitempty"`
	Argv        []string         `json:"argv" yaml:"argv"`
	Params      map[string]Param `json:"params,omitempty" yaml:"params,omitempty"`
	ReadOnly    bool             `json:"readonly" yaml:"readonly"`
	// Timeout overrides the provider's (0: provider default).
	Timeout config.Duration `json:"timeout" yaml:"timeout"`
	// Cwd overrides the provider's working directory ("" = the provider's);
	// relative to the config's directory, and inside it.
	Cwd string `json:"cwd,omitempty" yaml:"cwd,omitempty"`
}

// Param is a typed parameter of a Tool. Type defaults to "string".
type Param struct {
	Type        string   `json:"type" yaml:"type" default:"string"`
	Description string   `json:"description,omitempty" yaml:"description,omitempty"`
	Required    bool     `json:"required" yaml:"required"`
	Enum        []string `json:"enum,omitempty" yaml:"enum,omitempty"`
	// Default is used when the argument is absent, and shown in the schema:
	// a string, bool, int64, float64, []any or map[string]any; nil = none.
	Default any `json:"default,omitempty" yaml:"default,omitempty"`
	// Items is the type of an array's items (ItemTypes; "" = string).
	Items string `json:"items,omitempty" yaml:"items,omitempty"`
}

// DecodeField decodes tools and allow, whose absence and emptiness differ:
// tools given but empty is an error of its own, allow given but empty
// allows nothing.
func (c *Spec) DecodeField(d *config.Decoder, key string, n *yaml.Node, kp string) bool {
	switch key {
	case "tools":
		c.Tools = nil
		d.Sequence(n, kp, func(_ int, t *yaml.Node, tp string) {
			c.Tools = append(c.Tools, decodeTool(d, t, tp))
		})
		if c.Tools == nil {
			c.Tools = []Tool{}
		}
	case "allow":
		c.Allow = d.StringList(n, kp)
		if c.Allow == nil && !d.Bad(kp) {
			c.Allow = []string{} // given but empty: nothing is allowed
		}
	default:
		return false
	}
	return true
}

func decodeTool(d *config.Decoder, n *yaml.Node, path string) Tool {
	var t Tool
	if n == nil {
		return t
	}
	if n.Kind != yaml.MappingNode {
		d.MarkBad(path)
		d.ErrAt(n, path, "want a mapping with name and argv, got %s", config.Describe(n))
		return t
	}
	d.Decode(n, path, &t)
	return t
}

// Kind is the kind cli, for the list of kinds.
var Kind = provider.Kind{
	Kind: config.Kind{
		Name:     Name,
		NewSpec:  func() config.Spec { return &Spec{} },
		Validate: validateSpec,
		Resolve:  resolve,
		Redact: func(s config.Spec) config.Spec {
			c := *s.(*Spec)
			c.Env = config.RedactMap(c.Env)
			return &c
		},
		DefaultCwd: func(s config.Spec, dir string) {
			if c := s.(*Spec); c.Cwd == "" {
				c.Cwd = dir
			}
		},
	},
	Build: Build,
}

func clip(s string) string { return text.Clip(s, 40) }

func validateSpec(v *config.Validator, p *config.Provider, pp string) {
	c := p.Spec.(*Spec)
	v.Env(pp, c.Env)
	if len(c.Tools) == 0 && !v.Bad(pp+".tools") {
		if c.Tools == nil {
			v.Errf(pp, `kind cli needs "tools" (a list of {name, argv, ...})`)
		} else {
			v.Errf(pp+".tools", "must list at least one tool")
		}
	}
	allowOK := validateAllow(v, c, pp)
	validateCwd(v, pp+".cwd", c.Cwd)
	for _, prog := range slices.Sorted(maps.Keys(c.Version)) {
		vp := config.KeyPath(pp+".version", prog)
		switch {
		case v.Bad(vp):
		case !slices.Contains(c.Programs(), prog):
			v.Keyf(vp, "version names %q, which is not an allowed program (%s)", clip(prog), config.OrList(c.Programs()))
		case len(c.Version[prog]) == 0:
			v.Errf(vp, "version needs the arguments that print the version, e.g. [--version]")
		}
	}
	names := map[string]string{}
	for i := range c.Tools {
		tp := config.ItemPath(pp+".tools", i)
		if !v.Bad(tp) {
			validateTool(v, c, allowOK, &c.Tools[i], tp, names)
		}
	}
	for i, r := range p.ReadOnly {
		if _, ok := names[r]; !ok && r != "" && len(names) > 0 && !v.Bad(config.ItemPath(pp+".readonly", i)) {
			v.Errf(config.ItemPath(pp+".readonly", i), "readonly names %s, which is not a tool of this provider (%s)", v.Show(config.ItemPath(pp+".readonly", i), r), config.OrList(sortedKeys(names)))
		}
	}
}

func resolve(s config.Spec, cfg *config.Config) {
	c := s.(*Spec)
	c.Root = cfg.Dir
	c.Cwd = cfg.Resolve(c.Cwd)
	if c.Cwd == "" {
		c.Cwd = cfg.Dir
	}
	for i := range c.Tools {
		c.Tools[i].Cwd = cfg.Resolve(c.Tools[i].Cwd)
	}
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
func validateAllow(v *config.Validator, c *Spec, pp string) (ok bool) {
	ok = !v.Bad(pp + ".allow")
	for i, a := range c.Allow {
		ip := config.ItemPath(pp+".allow", i)
		switch {
		case v.Bad(ip):
			ok = false
		case a == "":
			v.Errf(ip, "empty program name")
			ok = false
		case strings.IndexByte(a, 0) >= 0:
			v.Errf(ip, "program name contains a NUL byte")
			ok = false
		}
	}
	return ok
}

// cwd checks that a working directory stays inside the config's directory.
func validateCwd(v *config.Validator, p, dir string) {
	if dir == "" || v.Bad(p) {
		return
	}
	inside := false
	switch {
	case !filepath.IsAbs(dir):
		inside = filepath.IsLocal(filepath.Clean(dir))
	case v.Dir() == "":
		inside = true // a config built in code: nothing to be inside of
	default:
		rel, err := filepath.Rel(v.Dir(), dir)
		inside = err == nil && filepath.IsLocal(rel)
	}
	if !inside {
		v.Errf(p, "cwd %s is outside the config's directory: cli tools run inside the project", v.Show(p, dir))
	}
}

func validateTool(v *config.Validator, c *Spec, allowOK bool, t *Tool, tp string, names map[string]string) {
	np := tp + ".name"
	switch {
	case v.Bad(np):
	case t.Name == "":
		v.Errf(tp, `missing required key "name"`)
	case !utf8.ValidString(t.Name):
		v.Errf(np, "tool name is not valid UTF-8")
	default:
		if first, dup := names[t.Name]; dup {
			v.Errf(np, "duplicate tool name %q%s", clip(t.Name), v.FirstAt(first))
		} else {
			names[t.Name] = np
		}
	}
	ap := tp + ".argv"
	argvOK := false
	switch {
	case v.Bad(ap):
	case t.Argv == nil:
		v.Errf(tp, `missing required key "argv" (the program and its arguments)`)
	case len(t.Argv) == 0:
		v.Errf(ap, "must not be empty: give at least the program")
	case t.Argv[0] == "" && !v.Bad(config.ItemPath(ap, 0)):
		v.Errf(config.ItemPath(ap, 0), "the program (argv[0]) must not be empty")
	default:
		argvOK = true
	}
	v.Duration(tp+".timeout", t.Timeout)
	validateCwd(v, tp+".cwd", t.Cwd)
	typed := map[string]argv.Param{}
	for name, prm := range t.Params {
		pp := config.KeyPath(tp+".params", name)
		switch {
		case name == "":
			v.Keyf(pp, "empty parameter name")
		case !argv.ValidName(name):
			v.Keyf(pp, "invalid parameter name %q: use letters, digits, _ and -, starting with a letter or _ (a template writes it {name})", clip(name))
		}
		badType := !slices.Contains(ParamTypes, prm.Type)
		if badType && !v.Bad(pp+".type") {
			v.Errf(pp+".type", "unknown type %s (want %s)", v.Show(pp+".type", prm.Type), config.OrList(ParamTypes))
		}
		if len(prm.Enum) > 0 && prm.Type != "string" {
			v.Keyf(pp+".enum", `"enum" needs type string`)
		}
		if badType {
			typed[name] = argv.Param{Type: prm.Type}
			continue
		}
		switch {
		case prm.Items == "" || v.Bad(pp+".items"):
		case prm.Type != "array":
			v.Keyf(pp+".items", `"items" needs type array`)
		case !slices.Contains(ItemTypes, prm.Items):
			v.Errf(pp+".items", "unknown item type %s (want %s)", v.Show(pp+".items", prm.Items), config.OrList(ItemTypes))
		}
		if prm.Default != nil && !v.Bad(pp+".default") {
			switch msg := defaultProblem(prm); {
			case prm.Required:
				v.Keyf(pp+".default", "a required parameter never uses its default: drop one of them")
			case msg != "":
				v.Errf(pp+".default", "%s", msg)
			}
		}
		typed[name] = argv.Param{Type: prm.Type, Items: prm.Items, Required: prm.Required}
	}
	if argvOK {
		validateArgv(v, c, allowOK, t, ap, typed)
	}
}

// cliArgv checks a tool's argv template against its parameters and the
// provider's allow list.
func validateArgv(v *config.Validator, c *Spec, allowOK bool, t *Tool, ap string, params map[string]argv.Param) {
	tmpl := &argv.Template{}
	ok := true
	for i, s := range t.Argv {
		ep := config.ItemPath(ap, i)
		if v.Bad(ep) {
			ok = false
			continue
		}
		e, err := argv.ParseElem(s)
		if err != nil {
			ok = false
			if v.FromEnv(ep) {
				v.Errf(ep, "%s is not a valid argv element: a literal { or } must be doubled", v.Show(ep, s))
			} else {
				v.Errf(ep, "%s: %v", strconv.Quote(clip(s)), err.(*argv.SyntaxError).Msg)
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
		ep := config.ItemPath(ap, p.Index)
		if p.Unknown == "" {
			v.Errf(ep, "%s", p.Msg)
			continue
		}
		msg := p.Msg
		if v.FromEnv(ep) {
			msg = "unknown parameter in " + v.Show(ep, "")
		}
		switch s := text.Suggest(p.Unknown, declared); {
		case s != "":
			msg += fmt.Sprintf("; did you mean {%s}?", s)
		case len(declared) == 0:
			msg += " (the tool declares no params)"
		default:
			msg += " (params: " + strings.Join(declared, ", ") + ")"
		}
		v.Errf(ep, "%s", msg)
	}
	if c.Allow != nil && allowOK && !slices.Contains(c.Allow, t.Argv[0]) {
		ep := config.ItemPath(ap, 0)
		if len(c.Allow) == 0 {
			v.Errf(ep, "program %s is not allowed: this provider's allow list is empty", v.Show(ep, t.Argv[0]))
		} else {
			v.Errf(ep, "program %s is not in this provider's allow list (%s): add it there, or spell argv[0] exactly as allow does", v.Show(ep, t.Argv[0]), strings.Join(c.Allow, ", "))
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
		return fmt.Sprintf("default %q is not one of the enum (%s)", clip(s), config.OrList(p.Enum))
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

var _ config.FieldDecoder = (*Spec)(nil)
