package cli_test

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider/cli"
	"github.com/agent-tools/agent-tools/internal/tests/configtest"
)

func TestCLIDecodes(t *testing.T) {
	src := `providers:
  - id: git
    kind: cli
    allow: [git, ./bin/tool]
    cwd: .
    env: { GIT_PAGER: cat }
    readonly: [status]
    tools:
      - name: log
        description: Recent commits, one line each.
        argv: [git, log, --oneline, "-n", "{count}", "--", "{path}"]
        params:
          count: { type: integer, description: How many, default: 10 }
          path:  { type: string, description: Limit to a path }
        readonly: true
      - name: commit
        argv: [git, commit, "--message={message}", "{all?--all}"]
        params: { message: { type: string, required: true }, all: { type: boolean } }
      - name: status
        argv: [git, status, --short, "--", "{paths}"]
        cwd: sub
        params:
          paths: { type: array, items: string, default: [".", "a b"] }
          ratio: { type: number, default: 1.5 }
          opts: { type: object, default: { a: 1 } }
          mode: { type: string, enum: [x, "y"], default: "y" }
      - name: tool
        argv: [./bin/tool, "{{literal}}"]
`
	c, err := configtest.Parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	cli := c.Providers[0].Spec.(*cli.Spec)
	if !slices.Equal(cli.Allow, []string{"git", "./bin/tool"}) || !slices.Equal(cli.Programs(), cli.Allow) {
		t.Errorf("allow = %q, programs = %q", cli.Allow, cli.Programs())
	}
	if cli.Cwd != c.Dir || cli.Root != c.Dir {
		t.Errorf("cwd %q root %q, want %q", cli.Cwd, cli.Root, c.Dir)
	}
	if got := cli.Tools[2].Cwd; got != filepath.Join(c.Dir, "sub") {
		t.Errorf("tool cwd = %q", got)
	}
	if cli.Tools[0].Cwd != "" {
		t.Errorf("a tool without cwd got %q", cli.Tools[0].Cwd)
	}
	p := cli.Tools[2].Params
	want := map[string]any{"paths": []any{".", "a b"}, "ratio": 1.5, "opts": map[string]any{"a": int64(1)}, "mode": "y"}
	for k, w := range want {
		if !reflect.DeepEqual(p[k].Default, w) {
			t.Errorf("%s default = %#v, want %#v", k, p[k].Default, w)
		}
	}
	if p["paths"].Items != "string" || cli.Tools[0].Params["count"].Default != int64(10) {
		t.Errorf("params = %+v / %+v", p, cli.Tools[0].Params)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("re-Validate after resolving paths: %v", err)
	}
}

func TestCLIProgramsDefault(t *testing.T) {
	c, err := configtest.Parse(t, "providers:\n  - id: x\n    kind: cli\n    tools:\n      - {name: a, argv: [ls]}\n      - {name: b, argv: [git, status]}\n      - {name: c, argv: [ls, -l]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Providers[0].Spec.(*cli.Spec).Programs(); !slices.Equal(got, []string{"ls", "git"}) {
		t.Errorf("programs = %q", got)
	}
}

func TestCLIErrors(t *testing.T) {
	head := "providers:\n  - id: git\n    kind: cli\n"
	tests := []struct {
		name, src string
		want      []string
	}{
		{"unknown param with suggestion", head + "    tools:\n      - name: log\n        argv: [git, log, \"{cuont}\"]\n        params: { count: { type: integer } }\n", []string{
			`agent-tools.yaml:6:26: providers[0].tools[0].argv[2]: unknown parameter {cuont}; did you mean {count}?`}},
		{"unknown param, none declared", head + "    tools:\n      - name: log\n        argv: [git, log, \"--max-count={n}\"]\n", []string{
			`agent-tools.yaml:6:26: providers[0].tools[0].argv[2]: unknown parameter {n} (the tool declares no params)`}},
		{"unknown param, list", head + "    tools:\n      - name: log\n        argv: [git, \"{zzz}\"]\n        params: { a: {}, b: {} }\n", []string{
			`agent-tools.yaml:6:21: providers[0].tools[0].argv[1]: unknown parameter {zzz} (params: a, b)`}},
		{"argv[0] outside allow", head + "    allow: [git]\n    tools:\n      - name: rm\n        argv: [rm, -rf, /]\n", []string{
			`agent-tools.yaml:7:16: providers[0].tools[0].argv[0]: program "rm" is not in this provider's allow list (git): add it there, or spell argv[0] exactly as allow does`}},
		{"argv[0] spelled differently", head + "    allow: [/usr/bin/git]\n    tools:\n      - name: st\n        argv: [git, status]\n", []string{
			`agent-tools.yaml:7:16: providers[0].tools[0].argv[0]: program "git" is not in this provider's allow list (/usr/bin/git): add it there, or spell argv[0] exactly as allow does`}},
		{"empty allow", head + "    allow: []\n    tools:\n      - name: st\n        argv: [git, status]\n", []string{
			`agent-tools.yaml:7:16: providers[0].tools[0].argv[0]: program "git" is not allowed: this provider's allow list is empty`}},
		{"program from a parameter", head + "    tools:\n      - name: run\n        argv: [\"{prog}\", x]\n        params: { prog: {} }\n", []string{
			`agent-tools.yaml:6:16: providers[0].tools[0].argv[0]: the program (argv[0]) must be literal text, never a parameter`}},
		{"malformed templates", head + "    tools:\n      - name: t\n        argv: [git, \"{\", \"a}\", \"{a b}\", \"x{all?--all}\", \"{all?}\", \"a\\0b\"]\n        params: { all: { type: boolean } }\n", []string{
			`agent-tools.yaml:6:21: providers[0].tools[0].argv[1]: "{": unclosed "{" (write "{{" for a literal brace)`,
			`agent-tools.yaml:6:26: providers[0].tools[0].argv[2]: "a}": unmatched "}" (write "}}" for a literal brace)`,
			`agent-tools.yaml:6:32: providers[0].tools[0].argv[3]: "{a b}": invalid placeholder "{a b}": want {name} or {flag?text}, with a name of letters, digits, _ and - (write {{ for a literal brace)`,
			`agent-tools.yaml:6:41: providers[0].tools[0].argv[4]: "x{all?--all}": the conditional "{all?--all}" must be a whole argv element`,
			`agent-tools.yaml:6:57: providers[0].tools[0].argv[5]: "{all?}": the conditional "{all?}" needs the text to emit, as in {all?--all}`,
			`agent-tools.yaml:6:67: providers[0].tools[0].argv[6]: "a\x00b": contains a NUL byte, which no program argument can hold`}},
		{"conditional over a string, array in text", head + "    tools:\n      - name: t\n        argv: [git, \"{m?--m}\", \"--f={files}\"]\n        params: { m: {}, files: { type: array } }\n", []string{
			`agent-tools.yaml:6:21: providers[0].tools[0].argv[1]: {m?--m} needs a boolean parameter, but m is a string`,
			`agent-tools.yaml:6:32: providers[0].tools[0].argv[2]: array parameter {files} must be a whole argv element (it expands to one element per item)`}},
		{"bad params", head + "    tools:\n      - name: t\n        argv: [git, \"{a}\", \"{b}\", \"{c}\", \"{d}\", \"{e}\", \"{f}\"]\n        params:\n" +
			"          a: { type: integer, default: x }\n" +
			"          b: { type: string, enum: [p, q], default: r }\n" +
			"          c: { type: string, required: true, default: s }\n" +
			"          d: { type: array, items: object }\n" +
			"          e: { type: string, items: string }\n" +
			"          f: { type: array, items: integer, default: [1, x] }\n" +
			"          \"1x\": { type: string }\n", []string{
			`agent-tools.yaml:8:40: providers[0].tools[0].params.a.default: default "x" does not have type integer`,
			`agent-tools.yaml:9:53: providers[0].tools[0].params.b.default: default "r" is not one of the enum (p or q)`,
			`agent-tools.yaml:10:46: providers[0].tools[0].params.c.default: a required parameter never uses its default: drop one of them`,
			`agent-tools.yaml:11:36: providers[0].tools[0].params.d.items: unknown item type "object" (want string, integer, number or boolean)`,
			`agent-tools.yaml:12:30: providers[0].tools[0].params.e.items: "items" needs type array`,
			`agent-tools.yaml:13:54: providers[0].tools[0].params.f.default: item 1: default "x" does not have type integer`,
			`agent-tools.yaml:14:11: providers[0].tools[0].params.1x: invalid parameter name "1x": use letters, digits, _ and -, starting with a letter or _ (a template writes it {name})`}},
		{"default from the environment", head + "    tools:\n      - name: t\n        argv: [git, \"{a}\", \"{b}\"]\n        params:\n          a: { default: \"${EV_KEY}\" }\n          b: { type: array, default: [\"x${EV_KEY}\"] }\n", []string{
			`agent-tools.yaml:8:25: providers[0].tools[0].params.a.default: a default is shown to the model in the tool's schema, so it cannot come from the environment (${EV_KEY})`,
			`agent-tools.yaml:9:39: providers[0].tools[0].params.b.default[0]: a default is shown to the model in the tool's schema, so it cannot come from the environment (${EV_KEY})`}},
		{"template from the environment never printed", head + "    tools:\n      - name: t\n        argv: [git, \"${BADKIND}{\"]\n      - name: u\n        argv: [git, \"{${BADKIND}}\"]\n", []string{
			`agent-tools.yaml:6:21: providers[0].tools[0].argv[1]: the value of ${BADKIND} is not a valid argv element: a literal { or } must be doubled`,
			`agent-tools.yaml:8:21: providers[0].tools[1].argv[1]: unknown parameter in the value of ${BADKIND} (the tool declares no params)`}},
		{"cwd outside the project", head + "    cwd: ../elsewhere\n    tools:\n      - name: t\n        argv: [git]\n        cwd: /etc\n      - name: u\n        argv: [git]\n        cwd: a/../../b\n", []string{
			`agent-tools.yaml:4:10: providers[0].cwd: cwd "../elsewhere" is outside the config's directory: cli tools run inside the project`,
			`agent-tools.yaml:8:14: providers[0].tools[0].cwd: cwd "/etc" is outside the config's directory: cli tools run inside the project`,
			`agent-tools.yaml:11:14: providers[0].tools[1].cwd: cwd "a/../../b" is outside the config's directory: cli tools run inside the project`}},
		{"readonly names no tool", head + "    readonly: [stauts]\n    tools:\n      - name: status\n        argv: [git, status]\n", []string{
			`agent-tools.yaml:4:16: providers[0].readonly[0]: readonly names "stauts", which is not a tool of this provider (status)`}},
		{"bad allow entries", head + "    allow: [\"\", [x]]\n    tools:\n      - name: t\n        argv: [git]\n", []string{
			`agent-tools.yaml:4:13: providers[0].allow[0]: empty program name`,
			`agent-tools.yaml:4:17: providers[0].allow[1]: want a string, got a list`}},
		{"unknown tool key", head + "    tools:\n      - name: t\n        argv: [git]\n        workdir: x\n", []string{
			`agent-tools.yaml:7:9: providers[0].tools[0]: unknown key "workdir" (want name, description, argv, params, readonly, timeout or cwd)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := configtest.Parse(t, tt.src)
			if err == nil {
				t.Fatal("no error")
			}
			got := configtest.ErrorsOf(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, s := range configtest.Env {
				if len(s) > 5 && strings.Contains(err.Error(), s) {
					t.Errorf("error leaks env value %q", s)
				}
			}
		})
	}
}

// FuzzCLIConfig parses cli provider entries: every error has a position,
// and a config that loads validates again after its paths are resolved.
func FuzzCLIConfig(f *testing.F) {
	f.Add("allow: [git]\n    tools:\n      - name: log\n        argv: [git, log, \"-n\", \"{count}\", \"--\", \"{path}\"]\n        params: {count: {type: integer, default: 10}, path: {}}\n")
	f.Add("tools:\n      - name: c\n        argv: [git, commit, \"--message={m}\", \"{all?--all}\"]\n        params: {m: {required: true}, all: {type: boolean}}\n")
	f.Add("tools:\n      - name: t\n        argv: [x, \"{{lit}}\", \"{a}{b}\", \"{\"]\n        params: {a: {type: array, items: integer, default: [1]}, b: {default: ${EV_KEY}}}\n        cwd: ../x\n")
	f.Fuzz(func(t *testing.T, entry string) {
		if len(entry) > 1024 {
			return
		}
		src := "providers:\n  - id: x\n    kind: cli\n    " + entry
		c, err := config.Parse("f.yaml", []byte(src), configtest.Lookup)
		if err != nil {
			e, ok := config.AsErrors(err)
			if !ok || len(e.List) == 0 {
				t.Fatalf("error is not a non-empty *Errors: %v", err)
			}
			for _, x := range e.List {
				if x.Line <= 0 || x.Msg == "" {
					t.Fatalf("error without position: %#v", x)
				}
				if strings.Contains(x.Msg, configtest.Env["EV_KEY"]) {
					t.Fatalf("error leaks a variable's value: %s", x.Msg)
				}
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded, but re-Validate fails: %v", err)
		}
	})
}
