package local

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func TestParseHeader(t *testing.T) {
	type P = Param
	tests := []struct {
		name string
		src  string
		want *Header
	}{
		{
			name: "hash with shebang",
			src:  "#!/bin/sh\n# @description Print the branch.\necho hi\n",
			want: &Header{Description: "Print the branch.", Interpreter: "/bin/sh"},
		},
		{
			name: "slash prefix",
			src:  "#!/usr/bin/env node\n// @description JS tool\n// @param *msg string The message\nconsole.log(1)\n",
			want: &Header{Description: "JS tool", Interpreter: "/usr/bin/env node",
				Params: []P{{Name: "msg", Type: "string", Description: "The message", Required: true, Line: 3}}},
		},
		{
			name: "dash prefix and repeated prefix characters",
			src:  "#!/usr/bin/env lua\n--- @description Lua tool\n-- @param n integer How many\n## times\nprint(1)\n-- @param late string\n",
			want: &Header{Description: "Lua tool", Interpreter: "/usr/bin/env lua",
				Params: []P{{Name: "n", Type: "integer", Description: "How many times", Line: 3}}},
		},
		{
			name: "no shebang, indented comments, CRLF",
			src:  "  # @description Windows\r\n\t# edited\r\n# @readonly\r\n",
			want: &Header{Description: "Windows edited", ReadOnly: true},
		},
		{
			name: "continuation of description and of param",
			src: "#!/bin/sh\n# @description First line\n#   second line\n" +
				"# @param *path string Path under /v3,\n# e.g. /users/42 or @acme/api\n# @param x boolean\n# described later\n",
			want: &Header{Description: "First line second line", Interpreter: "/bin/sh", Params: []P{
				{Name: "path", Type: "string", Description: "Path under /v3, e.g. /users/42 or @acme/api", Required: true, Line: 4},
				{Name: "x", Type: "boolean", Description: "described later", Line: 6},
			}},
		},
		{
			name: "@-tag text is a continuation, not a tag",
			src:  "# @description Continuation lines without an\n# @-tag append.\n",
			want: &Header{Description: "Continuation lines without an @-tag append."},
		},
		{
			name: "blank lines allowed inside the block, paragraph break ends continuation",
			src:  "#!/bin/sh\n\n# licence text before any tag\n# @description Deploy.\n\n# Copyright ACME\n#\n# @param env string Target\n#\n# more notes\nset -e\n# @param late string not in the block\n",
			want: &Header{Description: "Deploy.", Interpreter: "/bin/sh",
				Params: []P{{Name: "env", Type: "string", Description: "Target", Line: 8}}},
		},
		{
			name: "flags end continuation; timeout; confirm",
			src:  "# @description Release.\n# @confirm\n# human note\n# @timeout 2m30s\n",
			want: &Header{Description: "Release.", Confirm: true, Timeout: 150 * time.Second},
		},
		{
			name: "Octomind aliases, case-insensitive tags and types",
			src:  "# @desc Alias.\n# @Arg *Count INTEGER Number\n# @READONLY\n",
			want: &Header{Description: "Alias.", ReadOnly: true,
				Params: []P{{Name: "Count", Type: "integer", Description: "Number", Required: true, Line: 2}}},
		},
		{
			name: "two @description lines are joined",
			src:  "# @description One.\n# @description Two.\n",
			want: &Header{Description: "One. Two."},
		},
		{
			name: "all types",
			src:  "# @description T\n# @param a string\n# @param b boolean\n# @param c integer\n# @param d number\n# @param e array\n# @param f object\n",
			want: &Header{Description: "T", Params: []P{
				{Name: "a", Type: "string", Line: 2}, {Name: "b", Type: "boolean", Line: 3}, {Name: "c", Type: "integer", Line: 4},
				{Name: "d", Type: "number", Line: 5}, {Name: "e", Type: "array", Line: 6}, {Name: "f", Type: "object", Line: 7},
			}},
		},
		{
			name: "BOM, CRLF shebang",
			src:  "\xef\xbb\xbf#!/bin/sh\r\n# @description x\r\n",
			want: &Header{Description: "x", Interpreter: "/bin/sh", CRLF: true},
		},
		{
			name: "invalid UTF-8 is replaced",
			src:  "# @description caf\xe9\n",
			want: &Header{Description: "caf\uFFFD"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHeader([]byte(tt.src))
			if err != nil {
				t.Fatalf("ParseHeader: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseHeaderErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty file", "", ErrNoDescription.Error()},
		{"no comment block", "#!/bin/sh\necho hi\n# @description too late\n", ErrNoDescription.Error()},
		{"binary", "\x7fELF\x02\x01\x01\x00", ErrNoDescription.Error()},
		{"params but no description", "# @param x string\n", ErrNoDescription.Error()},
		{"empty description", "#!/bin/sh\n# @description\n# @param x string\n", "line 2: @description is empty"},
		{"unknown type", "#!/bin/sh\n# @description d\n#\n# @param count int How many\n",
			`line 4: @param "count": unknown type "int" (want string, boolean, integer, number, array or object)`},
		{"missing type", "# @description d\n# @param count\n",
			`line 2: @param "count": missing type (want string, boolean, integer, number, array or object)`},
		{"missing name", "# @description d\n# @param\n", `line 2: @param: missing name and type`},
		{"lone star", "# @description d\n# @param * string x\n", `line 2: @param "": invalid name`},
		{"bad name digit", "# @description d\n# @param 2x string\n", `line 2: @param "2x": invalid name`},
		{"bad name dash", "# @description d\n# @param dry-run boolean\n", `line 2: @param "dry-run": invalid name`},
		{"double star", "# @description d\n# @param **x string\n", `line 2: @param "*x": invalid name`},
		{"duplicate param", "# @description d\n# @param x string\n# @param *x integer\n",
			`line 3: @param "x": duplicate (first declared on line 2)`},
		{"case clash", "# @description d\n# @param dry_run boolean\n# @param DRY_RUN boolean\n",
			`line 3: @param "DRY_RUN": clashes with "dry_run" on line 2 (both are passed as AGENT_TOOLS_PARAM_DRY_RUN)`},
		{"readonly and confirm", "# @description d\n# @readonly\n# @confirm\n",
			"line 3: @confirm conflicts with @readonly on line 2"},
		{"confirm and readonly", "# @description d\n# @confirm\n# @readonly\n",
			"line 3: @readonly conflicts with @confirm on line 2"},
		{"readonly with value", "# @description d\n# @readonly true\n", `line 2: @readonly takes no value (got "true")`},
		{"bad timeout", "# @description d\n# @timeout 30\n", `line 2: @timeout "30": invalid duration`},
		{"negative timeout", "# @description d\n# @timeout -1s\n", `line 2: @timeout "-1s": must be positive`},
		{"empty timeout", "# @description d\n# @timeout\n", "line 2: @timeout: missing duration"},
		{"duplicate timeout", "# @description d\n# @timeout 1s\n# @timeout 2s\n", "line 3: duplicate @timeout (first on line 2)"},
		{"unknown tag", "# @description d\n# @TODO fix\n", "line 2: unknown tag @TODO (known: @description, @param, @readonly, @confirm, @timeout)"},
		{"unknown tag close to a known one", "# @description d\n# @params x string\n", "line 2: unknown tag @params: did you mean @param?"},
		{"read-only spelling", "# @description d\n# @read-only\n", "line 2: unknown tag @read-only: did you mean @readonly?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader([]byte(tt.src))
			if err == nil {
				t.Fatalf("want error %q, got %+v", tt.want, h)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got  %q\nwant %q...", err, tt.want)
			}
			var he *HeaderError
			if errors.As(err, &he) == errors.Is(err, ErrNoDescription) {
				t.Errorf("want exactly one of *HeaderError or ErrNoDescription: %#v", err)
			}
		})
	}
}

func TestSchemaGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "sample.header"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(src)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, h.Schema(), "", "  "); err != nil {
		t.Fatalf("schema is not JSON: %v\n%s", err, h.Schema())
	}
	got.WriteString("\n")
	golden := filepath.Join("testdata", "sample.schema.json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("schema differs from %s (go test -update to accept):\n%s", golden, got.Bytes())
	}
	if want := "Short summary the model sees. Continuation lines without an @-tag append to the previous one, so multi-line descriptions Just Work."; h.Description != want {
		t.Errorf("description %q", h.Description)
	}
	if h.Timeout != 90*time.Second {
		t.Errorf("timeout %v", h.Timeout)
	}
	checkSchema(t, h)
}

func TestSchemaWithoutParams(t *testing.T) {
	h := &Header{Description: "x"}
	if got, want := string(h.Schema()), `{"type":"object","properties":{},"additionalProperties":false}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// checkSchema asserts that h's schema is a valid JSON Schema that matches h.
func checkSchema(t *testing.T, h *Header) {
	t.Helper()
	raw := h.Schema()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("schema is not JSON: %v\n%s", err, raw)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, raw)
	}
	var s struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties || len(s.Properties) != len(h.Params) {
		t.Fatalf("bad schema shape: %s", raw)
	}
	args := map[string]any{}
	nreq := 0
	for _, p := range h.Params {
		if _, ok := s.Properties[p.Name]; !ok {
			t.Fatalf("param %q missing from %s", p.Name, raw)
		}
		if p.Required {
			if s.Required[nreq] != p.Name {
				t.Fatalf("required mismatch: %s", raw)
			}
			nreq++
			args[p.Name] = map[string]any{"string": "s", "boolean": true, "integer": 1, "number": 1.5, "array": []any{}, "object": map[string]any{}}[p.Type]
		}
	}
	if nreq != len(s.Required) {
		t.Fatalf("required mismatch: %s", raw)
	}
	if err := sch.Validate(args); err != nil {
		t.Fatalf("minimal valid arguments rejected: %v", err)
	}
	args["__extra"] = 1
	if err := sch.Validate(args); err == nil {
		t.Fatalf("additional property accepted by %s", raw)
	}
}

func FuzzParseHeader(f *testing.F) {
	if src, err := os.ReadFile(filepath.Join("testdata", "sample.header")); err == nil {
		f.Add(src)
	}
	for _, s := range []string{
		"",
		"#!/bin/sh\n# @description x\n# @param *a string A\n# @param b object\n",
		"// @description js\n// @param n number n\n",
		"-- @desc lua\n-- @arg *s STRING s\n-- @readonly\n",
		"# @description d\n# @param x string\n# @param X string\n",
		"# @description d\n# @timeout 1h\n# @confirm\n",
		"# @description \"quoted\" \\ \x00 \xff\n# @param u string <&>\u2028\n",
		"# @description d\n# @param * string\n",
		"\xef\xbb\xbf#!\r\n#@description\r\n#more\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		h, err := ParseHeader(src)
		if err != nil {
			if h != nil {
				t.Fatal("header returned with an error")
			}
			return
		}
		if h.Description == "" || !utf8.ValidString(h.Description) {
			t.Fatalf("bad description %q", h.Description)
		}
		if h.ReadOnly && h.Confirm {
			t.Fatal("readonly and confirm")
		}
		seen := map[string]bool{}
		for _, p := range h.Params {
			if !validName(p.Name) || !paramTypes[p.Type] || !utf8.ValidString(p.Description) || seen[strings.ToUpper(p.Name)] {
				t.Fatalf("bad param %+v", p)
			}
			seen[strings.ToUpper(p.Name)] = true
		}
		if !json.Valid(h.Schema()) {
			t.Fatalf("invalid JSON: %s", h.Schema())
		}
		checkSchema(t, h)
	})
}
