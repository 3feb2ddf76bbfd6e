package skills

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

func TestParseSkill(t *testing.T) {
	tests := []struct {
		name, src string
		want      catalog.Skill
		warn      string
	}{
		{"a", "export const meta = {description: ' d ', args: 'x'};\nexport async function run(tools, args) {}",
			catalog.Skill{Name: "a", Description: "d", Args: "x"}, ""},
		{"b", "const meta = {description: 'd', args: {days: 'number of days', label: 'optional'}, mutates: false};\nfunction run() {}",
			catalog.Skill{Name: "b", Description: "d", Args: `{"days":"number of days","label":"optional"}`}, ""},
		{"c", "var meta = {description: 'd', mutates: true}; const run = async () => 1;",
			catalog.Skill{Name: "c", Description: "d", Mutates: true}, ""},
		{"d", "export function run() {}", catalog.Skill{Name: "d"}, "no meta"},
		{"e", "  export let meta = {description: 'd'};\n\texport class X {}\nexport const run = function () {};\nexport { meta, run };",
			catalog.Skill{Name: "e", Description: "d"}, ""},
		{"f", "const meta = {description: 'd', related: {target: 'a:b'}}; function run() {}",
			catalog.Skill{Name: "f", Description: "d"}, "meta.related must be a list"},
		{"g", "const meta = {description: 'd', related: [{target: 'a:b', why: ' w '}, {target: 'ab'}]}; function run() {}",
			catalog.Skill{Name: "g", Description: "d", Related: []catalog.Related{{Target: "a:b", Why: "w"}}}, "meta.related[1].target"},
		{"exported", "export const exporter = 1; const meta = {description: 'x' + exporter}; function run() {}",
			catalog.Skill{Name: "exported", Description: "x1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSkill(context.Background(), tt.name, tt.name+".js", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if s.Meta.Name != tt.want.Name || s.Meta.Description != tt.want.Description || s.Meta.Args != tt.want.Args ||
				s.Meta.Mutates != tt.want.Mutates || len(s.Meta.Related) != len(tt.want.Related) {
				t.Errorf("meta %+v, want %+v", s.Meta, tt.want)
			}
			for i := range tt.want.Related {
				if s.Meta.Related[i] != tt.want.Related[i] {
					t.Errorf("related %+v", s.Meta.Related)
				}
			}
			w := strings.Join(s.Warnings, "; ")
			if tt.warn == "" && w != "" || !strings.Contains(w, tt.warn) {
				t.Errorf("warnings %q, want %q", w, tt.warn)
			}
			if s.File() != tt.name+".js" || s.HasMeta == (tt.warn == "no meta") {
				t.Errorf("file %q hasMeta %v", s.File(), s.HasMeta)
			}
		})
	}
}

func TestParseSkillErrors(t *testing.T) {
	tests := []struct{ name, src, reason string }{
		{"bad name", "function run() {}", "skill name"},
		{"-x", "function run() {}", "skill name"},
		{strings.Repeat("a", 65), "function run() {}", "skill name"},
		{"norun", "const meta = {description: 'd'}", "no run function"},
		{"runnotfn", "const meta = {description: 'd'}; const run = 5", "no run function"},
		{"syntax", "function run() {\n  return (;\n}", "SyntaxError: Unexpected token ; (line 2, column 11)"},
		{"throws", "throw new Error('at load')\nfunction run() {}", "running the file's top level: Error: at load (line 1, column 7)"},
		{"loops", "while (true) {}\nfunction run() {}", "did not finish within 1s"},
		{"usesmodule", "module.exports = {run() {}}", "ReferenceError: module is not defined"},
		{"metastr", "const meta = 'just text'; function run() {}", "meta must be an object {description, args, related, mutates}, not string"},
		{"metalist", "const meta = []; function run() {}", "not a list"},
		{"metanull", "const meta = null; function run() {}", "not null"},
		{"nodesc", "const meta = {args: 'x'}; function run() {}", "meta.description is missing"},
		{"descnum", "const meta = {description: 5}; function run() {}", "meta.description must be a string, not a number"},
		{"argsnum", "const meta = {description: 'd', args: 5}; function run() {}", "meta.args must be a string"},
		{"mutstr", "const meta = {description: 'd', mutates: 'yes'}; function run() {}", "meta.mutates must be true or false, not a string"},
		{"typo", "const meta = {description: 'd', mutate: true}; function run() {}", `unknown field "mutate" (did you mean "mutates"?)`},
		{"extra", "const meta = {description: 'd', tags: []}; function run() {}", `unknown field "tags"; meta takes description, args, related, mutates`},
		{"default", "export default {meta, run}", "export default is not supported"},
		{"import", "import x from './x.js'\nfunction run() {}", "line 1: import is not available"},
		{"dynimport", "  import('x')", "import is not available"},
		{"exportfrom", "export { a } from './a.js'", "only a one-line"},
		{"exportweird", "export * from 'x'", "unsupported export"},
		{"big", strings.Repeat(" ", 600<<10) + "function run() {}", "a skill may have at most"},
		{"deep", strings.Repeat("(", 2000), "brackets nest deeper"},
		{"utf8", "function run() {} \xff", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSkill(context.Background(), tt.name, tt.name+".js", []byte(tt.src))
			le, ok := err.(*LoadError)
			if !ok || !strings.Contains(le.Reason, tt.reason) {
				t.Errorf("err %v, want %q", err, tt.reason)
			}
		})
	}
}

func TestTransform(t *testing.T) {
	src := "export const meta = {};\r\n  export async function run() {}\nexport { meta };\nconst exports = 1; // export stays\nexported();\n"
	got, err := Transform(src)
	if err != nil {
		t.Fatal(err)
	}
	want := "       const meta = {};\r\n         async function run() {}\n                \nconst exports = 1; // export stays\nexported();\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if len(got) != len(src) {
		t.Errorf("length changed: columns moved")
	}
}

// FuzzParseSkill: loading never panics, ends within the load timeout plus
// grace, and a loaded skill's metadata is well formed.
func FuzzParseSkill(f *testing.F) {
	for _, seed := range []string{
		triage,
		"function run() {}",
		"export const meta = {description: 'x', related: [{target: 'a:b'}]}; export function run() {}",
		"export default 1",
		"import x from 'y'",
		"export { meta, run };",
		"const meta = {description: 'x', mutates: 1}; function run() {}",
		"while (true) {}",
		"const meta = {get description() { for (;;) {} }}; function run() {}",
		"const meta = new Proxy({}, {ownKeys() { throw 1 }}); function run() {}",
		"const meta = {description: 'x', args: {a: [1, {b: 2n}]}}; function run() {}",
		"export\nconst x = 1",
		"export function* run() {}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		s, err := ParseSkill(context.Background(), "fuzz", "fuzz.js", []byte(src))
		if took := time.Since(start); took > LoadTimeout+3*time.Second {
			t.Fatalf("took %v", took)
		}
		if err != nil {
			if _, ok := err.(*LoadError); !ok {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		for _, r := range s.Meta.Related {
			if !targetRE.MatchString(r.Target) {
				t.Fatalf("related target %q", r.Target)
			}
		}
		if s.Meta.Name != "fuzz" || (!s.HasMeta && (s.Meta.Description != "" || s.Meta.Args != "" || s.Meta.Mutates)) {
			t.Fatalf("meta %+v", s.Meta)
		}
	})
}
