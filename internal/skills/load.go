package skills

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/jsrun"
)

// Skill is one loaded skill file.
type Skill struct {
	// Meta is the catalog entry (Provider is left empty; the Dir fills it).
	Meta catalog.Skill
	// HasMeta is false for a file without `meta`: it runs, but discover
	// cannot find it by text.
	HasMeta bool
	// Warnings are non-fatal problems (dropped related entries, no meta).
	Warnings []string

	file    string
	code    string // the transformed source, for the process that runs it
	program *goja.Program
}

// File is the file the skill was loaded from.
func (s *Skill) File() string { return s.file }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// metaFields are the only keys meta may have: a typo in `mutates` must not
// silently make a mutating skill look read-only.
var metaFields = []string{"description", "args", "related", "mutates"}

// LoadTimeout bounds running a skill file's top level at load.
const LoadTimeout = time.Second

// ParseSkill loads one skill: name is the skill's name (the file name
// without its extension), file is what positions refer to. The file's top
// level runs once in a sandbox without tools, bounded by LoadTimeout; it
// must define `meta` (optional) and `run`. A failure is a *LoadError.
func ParseSkill(ctx context.Context, name, file string, src []byte) (*Skill, error) {
	if !nameRE.MatchString(name) {
		return nil, loadErr("skill name %q is not valid: use letters, digits, '-' and '_' (at most 64, starting with a letter or digit)", name)
	}
	if len(src) > jsrun.MaxSourceLen {
		return nil, loadErr("file is %d bytes; a skill may have at most %d", len(src), jsrun.MaxSourceLen)
	}
	if !utf8.Valid(src) {
		return nil, loadErr("file is not valid UTF-8")
	}
	code, err := Transform(string(src))
	if err != nil {
		return nil, err
	}
	if why := jsrun.CheckSource(code); why != "" {
		return nil, loadErr("%s", why)
	}
	prg, err := jsrun.Compile(file, code)
	if err != nil {
		return nil, loadErr("%v", err)
	}
	sess, err := jsrun.NewSession(file, jsrun.Limits{Timeout: LoadTimeout})
	if err != nil {
		return nil, loadErr("%v", err)
	}
	var (
		meta     any
		metaType string
		hasRun   bool
	)
	_, err = sess.Exec(ctx, func(_ context.Context, vm *goja.Runtime) (goja.Value, error) {
		if _, err := vm.RunProgram(prg); err != nil {
			return nil, err
		}
		v, err := vm.RunString(`(() => {
			const t = typeof meta === "undefined" ? "undefined" : meta === null ? "null" : Array.isArray(meta) ? "a list" : typeof meta;
			return [t, t === "object" ? meta : undefined, typeof run === "function"];
		})()`)
		if err != nil {
			return nil, err
		}
		triple := v.ToObject(vm)
		metaType = triple.Get("0").String()
		if metaType == "object" {
			meta = triple.Get("1").Export()
		}
		hasRun = triple.Get("2").ToBoolean()
		return nil, nil
	})
	if err != nil {
		return nil, loadErr("running the file's top level: %v", err)
	}
	if !hasRun {
		return nil, loadErr("no run function: define `export async function run(tools, args) { ... }`")
	}
	s := &Skill{file: file, code: code, program: prg, Meta: catalog.Skill{Name: name}}
	switch metaType {
	case "undefined":
		s.Warnings = append(s.Warnings, "no meta: it runs, but discover cannot find it by text; add `export const meta = {description, args}`")
		return s, nil
	case "object":
	default:
		return nil, loadErr("meta must be an object {description, args, related, mutates}, not %s", metaType)
	}
	if err := s.setMeta(meta); err != nil {
		return nil, err
	}
	s.HasMeta = true
	return s, nil
}

// setMeta checks and copies meta's fields.
func (s *Skill) setMeta(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return loadErr("meta must be a plain object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		known := false
		for _, f := range metaFields {
			known = known || k == f
		}
		if !known {
			return loadErr("meta has an unknown field %q%s; meta takes %s", k, suggest(k), strings.Join(metaFields, ", "))
		}
	}
	switch d := m["description"].(type) {
	case string:
		s.Meta.Description = strings.TrimSpace(d)
	case nil:
		return loadErr("meta.description is missing: one line saying what the skill does")
	default:
		return loadErr("meta.description must be a string, not %s", typeName(d))
	}
	switch a := m["args"].(type) {
	case nil:
	case string:
		s.Meta.Args = strings.TrimSpace(a)
	case map[string]any, []any:
		b, err := jsonscan.Marshal(a)
		if err != nil {
			return loadErr("meta.args cannot be encoded: %v", err)
		}
		s.Meta.Args = string(b)
	default:
		return loadErr("meta.args must be a string (or an object), not %s", typeName(a))
	}
	switch mu := m["mutates"].(type) {
	case nil:
	case bool:
		s.Meta.Mutates = mu
	default:
		return loadErr("meta.mutates must be true or false, not %s", typeName(mu))
	}
	s.setRelated(m["related"])
	return nil
}

// targetRE is "prefix:skill".
var targetRE = regexp.MustCompile(`^[^\s:]+:[^\s:]+$`)

// setRelated keeps the well-formed related entries; the others are dropped
// with a warning (related is discoverability metadata, never fatal).
func (s *Skill) setRelated(v any) {
	if v == nil {
		return
	}
	list, ok := v.([]any)
	if !ok {
		s.Warnings = append(s.Warnings, fmt.Sprintf("meta.related must be a list of {target, why}, not %s: ignored", typeName(v)))
		return
	}
	for i, e := range list {
		o, ok := e.(map[string]any)
		if !ok {
			s.Warnings = append(s.Warnings, fmt.Sprintf("meta.related[%d] must be {target, why}: ignored", i))
			continue
		}
		target, _ := o["target"].(string)
		if !targetRE.MatchString(target) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("meta.related[%d].target must be \"prefix:skill\": ignored", i))
			continue
		}
		why, ok := o["why"].(string)
		if !ok && o["why"] != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("meta.related[%d].why must be a string: ignored", i))
			continue
		}
		s.Meta.Related = append(s.Meta.Related, catalog.Related{Target: target, Why: strings.TrimSpace(why)})
	}
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64, int:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func suggest(k string) string {
	lk := strings.ToLower(k)
	for _, f := range metaFields {
		if strings.HasPrefix(lk, f[:4]) || strings.HasPrefix(f, lk) {
			return fmt.Sprintf(" (did you mean %q?)", f)
		}
	}
	return ""
}

// LoadError is why a skill file was skipped.
type LoadError struct{ Reason string }

func (e *LoadError) Error() string { return e.Reason }

func loadErr(format string, a ...any) error { return &LoadError{Reason: fmt.Sprintf(format, a...)} }

// Transform turns the seed's ES-module-ish skill files into a script. goja
// runs scripts, not modules, so, at the start of a line only:
//   - `export ` before const/let/var/function/async/class is blanked (the
//     declaration stays; columns do not move);
//   - a one-line `export { a, b };` list is blanked (the names are declared);
//   - `export default` and `import` are refused with a reason.
//
// The rewrite is textual: a line inside a template literal that starts with
// `export ` is rewritten too.
func Transform(src string) (string, error) {
	lines := strings.SplitAfter(src, "\n")
	for i, ln := range lines {
		body := strings.TrimLeft(ln, " \t")
		indent := len(ln) - len(body)
		switch {
		case hasWord(body, "import"):
			return "", loadErr("line %d: import is not available in skills (there are no modules): call other tools with tools.call", i+1)
		case !hasWord(body, "export"):
			continue
		}
		rest := strings.TrimLeft(body[len("export"):], " \t")
		switch {
		case hasWord(rest, "default"):
			return "", loadErr("line %d: export default is not supported: export meta and run by name (export const meta = {...}; export async function run(tools, args) {...})", i+1)
		case strings.HasPrefix(rest, "{"):
			end := strings.Index(rest, "}")
			if end < 0 || strings.Contains(rest[end:], "from") {
				return "", loadErr("line %d: only a one-line `export { meta, run };` list is supported", i+1)
			}
			tail := strings.TrimLeft(rest[end+1:], " \t")
			tail = strings.TrimPrefix(tail, ";")
			if strings.TrimSpace(tail) != "" {
				return "", loadErr("line %d: put nothing after an `export { ... };` list", i+1)
			}
			lines[i] = ln[:indent] + strings.Repeat(" ", len(strings.TrimRight(body, "\r\n"))) + ln[len(strings.TrimRight(ln, "\r\n")):]
		case hasWord(rest, "const"), hasWord(rest, "let"), hasWord(rest, "var"), hasWord(rest, "function"),
			hasWord(rest, "async"), hasWord(rest, "class"), strings.HasPrefix(rest, "function*"):
			lines[i] = ln[:indent] + "      " + body[len("export"):]
		default:
			return "", loadErr("line %d: unsupported export: export const/let/var/function/async function/class declarations only", i+1)
		}
	}
	return strings.Join(lines, ""), nil
}

// hasWord reports whether s starts with word followed by a non-identifier character.
func hasWord(s, word string) bool {
	if !strings.HasPrefix(s, word) {
		return false
	}
	if len(s) == len(word) {
		return true
	}
	c := s[len(word)]
	return !(c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80)
}
