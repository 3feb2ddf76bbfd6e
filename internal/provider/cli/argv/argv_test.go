package argv

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseElemErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{", `at byte 0: unclosed "{" (write "{{" for a literal brace)`},
		{"a}", `at byte 1: unmatched "}" (write "}}" for a literal brace)`},
		{"--x={n", `at byte 4: unclosed "{"`},
		{"{}", `at byte 0: invalid placeholder "{}"`},
		{"{1x}", `invalid placeholder "{1x}"`},
		{"{a b}", `invalid placeholder "{a b}"`},
		{"{$(rm -rf /)}", `invalid placeholder "{$(rm -rf /)}"`},
		{"{.title}", `invalid placeholder "{.title}"`},
		{"x{all?--all}", `at byte 1: the conditional "{all?--all}" must be a whole argv element`},
		{"{all?--all}x", `the conditional "{all?--all}" must be a whole argv element`},
		{"{all?}", `the conditional "{all?}" needs the text to emit, as in {all?--all}`},
		{"{all?{x}}", `at byte 5: the text of "{all?{x}" cannot contain a brace`},
		{"{?x}", `invalid placeholder "{?x}"`},
		{"a\x00b", `at byte 1: contains a NUL byte`},
		{"{" + strings.Repeat("a", 65) + "}", `invalid placeholder`},
	}
	for _, tt := range tests {
		_, err := ParseElem(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseElem(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestParseElem(t *testing.T) {
	tests := []struct {
		in    string
		parts []Part
		cond  string
	}{
		{"log", []Part{{Text: "log"}}, ""},
		{"", []Part{{Text: ""}}, ""},
		{"{count}", []Part{{Param: "count"}}, ""},
		{"--max-count={count}", []Part{{Text: "--max-count="}, {Param: "count"}}, ""},
		{"{owner}/{repo}", []Part{{Param: "owner"}, {Text: "/"}, {Param: "repo"}}, ""},
		{"{{.title}}", []Part{{Text: "{.title}"}}, ""},
		{"{{{x}}}", []Part{{Text: "{"}, {Param: "x"}, {Text: "}"}}, ""},
		{"{all?--all}", nil, "all"},
		{"{dry-run?--dry-run}", nil, "dry-run"},
		{"; rm -rf / | $(id) `id`", []Part{{Text: "; rm -rf / | $(id) `id`"}}, ""},
	}
	for _, tt := range tests {
		e, err := ParseElem(tt.in)
		if err != nil {
			t.Errorf("ParseElem(%q): %v", tt.in, err)
			continue
		}
		if e.Cond != tt.cond || !slices.Equal(e.Parts, tt.parts) {
			t.Errorf("ParseElem(%q) = %+v", tt.in, e)
		}
	}
}

func TestCheck(t *testing.T) {
	params := map[string]Param{
		"message": {Type: "string", Required: true},
		"all":     {Type: "boolean"},
		"count":   {Type: "integer"},
		"files":   {Type: "array", Items: "string"},
		"unused":  {Type: "string"},
	}
	tests := []struct {
		argv []string
		want []string
	}{
		{[]string{"git", "commit", "-m", "{message}", "{all?--all}", "--", "{files}"}, nil},
		{[]string{"git", "{mesage}"}, []string{"1:mesage:unknown parameter {mesage}"}},
		{[]string{"{message}", "x"}, []string{"0::the program (argv[0]) must be literal text, never a parameter"}},
		{[]string{"git", "{count?--n}"}, []string{"1::{count?--n} needs a boolean parameter, but count is an integer"}},
		{[]string{"git", "--files={files}"}, []string{"1::array parameter {files} must be a whole argv element (it expands to one element per item)"}},
	}
	for _, tt := range tests {
		tmpl, err := Parse(tt.argv)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range tmpl.Check(params) {
			got = append(got, strings.Join([]string{string(rune('0' + p.Index)), p.Unknown, p.Msg}, ":"))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Check(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
	tmpl, _ := Parse([]string{"git", "{message}", "{all?--all}", "{count}", "--", "{files}"})
	if got := tmpl.Unused(params); !slices.Equal(got, []string{"unused"}) {
		t.Errorf("Unused = %q", got)
	}
	sens := tmpl.OptionSensitive()
	if !sens["message"] || !sens["count"] || sens["files"] || sens["all"] {
		t.Errorf("OptionSensitive = %v", sens)
	}
}

func TestParseJoinsElementErrors(t *testing.T) {
	_, err := Parse([]string{"git", "{", "ok", "}"})
	var ee *ElemError
	if !errors.As(err, &ee) || ee.Index != 1 || !strings.Contains(err.Error(), "argv[3]:") {
		t.Fatalf("err = %v", err)
	}
}

func TestExpand(t *testing.T) {
	params := map[string]Param{
		"message": {Type: "string", Required: true},
		"all":     {Type: "boolean"},
		"count":   {Type: "integer", Default: mustNorm(t, 10)},
		"ratio":   {Type: "number"},
		"path":    {Type: "string"},
		"files":   {Type: "array", Items: "string"},
		"ids":     {Type: "array", Items: "integer"},
		"meta":    {Type: "object"},
	}
	argvT := []string{"git", "commit", "--message={message}", "{all?--all}", "-n", "{count}", "--ratio={ratio}", "{meta}", "{ids}", "--", "{path}", "{files}"}
	tmpl, err := Parse(argvT)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       []string
		err        string
	}{
		{"defaults and drops", `{"message":"hi"}`, []string{"git", "commit", "--message=hi", "-n", "10", "--"}, ""},
		{"everything", `{"message":"m","all":true,"count":3,"ratio":1.5,"path":"a b","files":["x","y"],"ids":[1,2e0],"meta":{"b":1,"a":"<&>"}}`,
			[]string{"git", "commit", "--message=m", "--all", "-n", "3", "--ratio=1.5", `{"a":"<&>","b":1}`, "1", "2", "--", "a b", "x", "y"}, ""},
		{"false flag and null drop", `{"message":"m","all":false,"path":null}`, []string{"git", "commit", "--message=m", "-n", "10", "--"}, ""},
		{"empty array", `{"message":"m","files":[]}`, []string{"git", "commit", "--message=m", "-n", "10", "--"}, ""},
		{"metacharacters stay literal", `{"message":"; rm -rf / | $(id) ` + "`id`" + ` > /x && y\nz","path":"$(touch pwned)"}`,
			[]string{"git", "commit", "--message=; rm -rf / | $(id) `id` > /x && y\nz", "-n", "10", "--", "$(touch pwned)"}, ""},
		{"dash after -- is fine", `{"message":"m","path":"-rf","files":["--force"]}`, []string{"git", "commit", "--message=m", "-n", "10", "--", "-rf", "--force"}, ""},
		{"dash in attached option value is fine", `{"message":"- a list item"}`, []string{"git", "commit", "--message=- a list item", "-n", "10", "--"}, ""},
		{"exponent integers", `{"message":"m","count":1e3}`, []string{"git", "commit", "--message=m", "-n", "1000", "--"}, ""},
		{"exponent numbers", `{"message":"m","ratio":2.5E-3}`, []string{"git", "commit", "--message=m", "-n", "10", "--ratio=0.0025", "--"}, ""},
		{"negative count before --", `{"message":"m","count":-5}`, nil, `parameter "count": starts with "-"`},
		{"dash in array before --", `{"message":"m","ids":[-1]}`, nil, `parameter "ids": starts with "-"`},
		{"missing required", `{}`, nil, `parameter "message": is required`},
		{"unknown argument", `{"message":"m","mesage":"x"}`, nil, `parameter "mesage": is not a parameter of this tool`},
		{"NUL", `{"message":"a\u0000b"}`, nil, `parameter "message": contains a NUL byte`},
		{"NUL in array", `{"message":"m","files":["ok","\u0000"]}`, nil, `parameter "files": contains a NUL byte`},
		{"wrong type", `{"message":5}`, nil, `parameter "message": want a string, got a number`},
		{"fraction for integer", `{"message":"m","count":1.5}`, nil, `parameter "count": want an integer, got 1.5`},
		{"flag not boolean", `{"message":"m","all":"yes"}`, nil, `parameter "all": want true or false, got a string`},
		{"huge argument", `{"message":"` + strings.Repeat("x", MaxElemBytes) + `"}`, nil, "longer than"},
		{"too many arguments", `{"message":"m","files":[` + strings.Repeat(`"x",`, MaxElems) + `"x"]}`, nil, "would exceed"},
		{"not an object", `[1]`, nil, "must be a JSON object"},
		{"two objects", `{} {}`, nil, "one JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := DecodeArgs([]byte(tt.args))
			var got []string
			if err == nil {
				got, err = tmpl.Expand(params, args)
			}
			if tt.err != "" {
				var ae *ArgError
				if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
}

func TestExpandDashWithoutSeparator(t *testing.T) {
	// The log template has no "--": a path that starts with "-" is
	// refused instead of reaching git as an option.
	tmpl, _ := Parse([]string{"git", "log", "--oneline", "-n", "{count}", "{path}"})
	params := map[string]Param{"count": {Type: "integer", Default: mustNorm(t, 10)}, "path": {Type: "string"}}
	for _, v := range []string{"--output=/tmp/x", "-p", "-"} {
		_, err := tmpl.Expand(params, map[string]any{"path": v})
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Param != "path" || !strings.Contains(ae.Hint, "./-name") {
			t.Errorf("path %q: err = %v", v, err)
		}
	}
	got, err := tmpl.Expand(params, map[string]any{"path": "./-p"})
	if err != nil || !slices.Equal(got, []string{"git", "log", "--oneline", "-n", "10", "./-p"}) {
		t.Errorf("./-p: %q %v", got, err)
	}
	// An embedded value that starts the element is checked too.
	tmpl, _ = Parse([]string{"gh", "repo", "view", "{owner}/{repo}"})
	params = map[string]Param{"owner": {Type: "string"}, "repo": {Type: "string"}}
	if _, err := tmpl.Expand(params, map[string]any{"owner": "--web", "repo": "x"}); err == nil {
		t.Error("--web/x was accepted as the first element")
	}
	if got, _ := tmpl.Expand(params, map[string]any{"owner": "a"}); !slices.Equal(got, []string{"gh", "repo", "view"}) {
		t.Errorf("absent repo did not drop the element: %q", got)
	}
}

func mustNorm(t *testing.T, v any) any {
	t.Helper()
	n, err := Normalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// FuzzExpand checks the expander's promises on any template and arguments:
// no panic; every output element is one of the literal pieces or values
// (never split); no NUL; no element starting with "-" comes from a value
// before a literal "--".
func FuzzExpand(f *testing.F) {
	f.Add("git\x1flog\x1f-n\x1f{count}\x1f{path}", `{"count":3,"path":"a;b"}`)
	f.Add("git\x1fcommit\x1f--message={message}\x1f{all?--all}", `{"message":"$(id)\n","all":true}`)
	f.Add("x\x1f--\x1f{files}", `{"files":["-a","b c"]}`)
	f.Add("x\x1f{{lit}}\x1f{a}{b}", `{"a":"-","b":1e2}`)
	f.Add("x\x1f{", `{}`)
	f.Fuzz(func(t *testing.T, tmplSrc, args string) {
		if len(tmplSrc) > 256 || len(args) > 512 {
			return
		}
		tmpl, err := Parse(strings.Split(tmplSrc, "\x1f"))
		if err != nil {
			return
		}
		params := map[string]Param{}
		for _, e := range tmpl.Elems {
			for _, n := range e.Params() {
				typ := "string"
				switch {
				case e.Cond != "":
					typ = "boolean"
				case strings.HasPrefix(n, "n"):
					typ = "number"
				case strings.HasPrefix(n, "f"):
					if _, whole := e.Whole(); whole {
						typ = "array"
					}
				}
				if old, ok := params[n]; ok && old.Type != typ {
					return // one name, two uses of different types
				}
				params[n] = Param{Type: typ}
			}
		}
		if len(tmpl.Check(params)) > 0 {
			return
		}
		a, err := DecodeArgs([]byte(args))
		if err != nil {
			return
		}
		out, err := tmpl.Expand(params, a)
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *ArgError", err)
			}
			return
		}
		if len(out) > len(tmpl.Elems)+len(args) {
			t.Fatalf("%d elements from %d template elements", len(out), len(tmpl.Elems))
		}
		sepAt := -1
		for i, e := range tmpl.Elems {
			if lit, ok := e.Literal(); ok && lit == "--" {
				sepAt = i
				break
			}
		}
		for _, s := range out {
			if strings.IndexByte(s, 0) >= 0 {
				t.Fatalf("NUL in %q", s)
			}
		}
		if sepAt < 0 {
			// Without "--", an element starting with "-" must be literal text
			// of the template.
			for _, s := range out {
				if strings.HasPrefix(s, "-") && !literalIn(tmpl, s) {
					t.Fatalf("value %q starts with - and no -- guards it (template %q)", s, tmplSrc)
				}
			}
		}
	})
}

func literalIn(t *Template, s string) bool {
	for _, e := range t.Elems {
		if e.Cond != "" && e.CondText == s {
			return true
		}
		if e.startsWithValue() {
			continue
		}
		if lit, ok := e.Literal(); ok && lit == s {
			return true
		}
		if len(e.Parts) > 0 && e.Parts[0].Param == "" && strings.HasPrefix(s, e.Parts[0].Text) {
			return true
		}
	}
	return false
}
