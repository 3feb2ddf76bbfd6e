package prompts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, src string
		err       string
		want      string // rendered with args a=A
	}{
		{"plain", "Just text.", "", "Just text."},
		{"fm", "---\nname: greet\ndescription: Say hi\narguments:\n  - name: a\n    required: true\n---\nHello {{a}}!\n", "", "Hello A!"},
		{"crlf", "---\r\nname: x\r\narguments: [{name: a}]\r\n---\r\nHi {{ a }}\r\n", "", "Hi A"},
		{"empty fm", "---\n---\nbody", "", "body"},
		{"unterminated", "---\nname: x\nbody", "never ends", ""},
		{"unknown key", "---\nnmae: x\n---\nbody", "front matter", ""},
		{"bad yaml", "---\nname: [\n---\nbody", "front matter", ""},
		{"undeclared", "---\narguments: [{name: a}]\n---\n{{b}}", "{{b}} is not a declared argument", ""},
		{"dup arg", "---\narguments: [{name: a}, {name: a}]\n---\nx", "declared twice", ""},
		{"bad arg", "---\narguments: [{name: 'a b'}]\n---\nx", "bad argument name", ""},
		{"bad name", "---\nname: 'a/b'\n---\nx", "prompt name", ""},
		{"no body", "---\nname: x\n---\n  \n", "no text", ""},
		{"closing glued", "---\nname: x\n---body", "alone on its line", ""},
		{"not utf8", "\xff", "UTF-8", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("file", []byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]string{}
			if p.declares("a") {
				args["a"] = "A"
			}
			got, err := p.Render(args)
			if err != nil || got != tc.want {
				t.Fatalf("render = %q %v", got, err)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	p, _ := Parse("x", []byte("---\narguments: [{name: a, required: true}, {name: b}]\n---\n{{a}} {{b}}"))
	if _, err := p.Render(map[string]string{"b": "1"}); err == nil || !strings.Contains(err.Error(), "needs argument(s): a") {
		t.Fatalf("missing required: %v", err)
	}
	if _, err := p.Render(map[string]string{"a": "1", "c": "2"}); err == nil || !strings.Contains(err.Error(), `no argument "c"`) {
		t.Fatalf("unknown arg: %v", err)
	}
	if got, _ := p.Render(map[string]string{"a": "{{b}}"}); got != "{{b}} " {
		t.Fatalf("substitution must not recurse: %q", got)
	}
}

// Over MCP, prompts/get with a missing required or an undeclared argument
// answers with -32602 (invalid params), not code 0.
func TestRenderErrorsAreInvalidParams(t *testing.T) {
	p, _ := Parse("x", []byte("---\nname: x\narguments: [{name: a, required: true}]\n---\n{{a}}"))
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	srv.AddPrompt(&sdk.Prompt{Name: "x"}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		text, err := p.Render(req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}}}, nil
	})
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, args := range []map[string]string{nil, {"a": " "}, {"a": "1", "z": "2"}} {
		_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "x", Arguments: args})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%v: %v, want code %d", args, err, jsonrpc.CodeInvalidParams)
		}
	}
	if r, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "x", Arguments: map[string]string{"a": "A"}}); err != nil || r.Messages[0].Content.(*sdk.TextContent).Text != "A" {
		t.Fatalf("%v, %v", r, err)
	}
}

func TestDirReloads(t *testing.T) {
	dir := t.TempDir()
	d := NewDir(dir, nil)
	if ps, _, probs := d.Load(); len(ps) != 0 || len(probs) != 0 {
		t.Fatal("empty dir")
	}
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "First")
	write("b.md", "---\nname: a\n---\nDuplicate name")
	write("c.txt", "ignored")
	write("d.md", "---\nname: [\n---\nx")
	ps, changed, probs := d.Load()
	if len(ps) != 1 || ps[0].Name != "a" || !changed || len(probs) != 2 {
		t.Fatalf("prompts %v changed %v problems %v", ps, changed, probs)
	}
	if _, changed, _ := d.Load(); changed {
		t.Fatal("no change reported as change")
	}
	write("a.md", "Second, longer")
	if ps, changed, _ := d.Load(); !changed || ps[0].Body != "Second, longer" {
		t.Fatal("edit not seen")
	}
	os.Remove(filepath.Join(dir, "a.md"))
	if ps, changed, _ := d.Load(); !changed || len(ps) != 1 || ps[0].Body != "Duplicate name" {
		t.Fatalf("after delete: %v", ps)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: x\narguments: [{name: a, required: true}]\n---\nHi {{a}}"))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 4096 {
			return // bounded inputs keep the fuzzer fast (YAML front matter is small)
		}
		p, err := Parse("f", src)
		if err != nil {
			return
		}
		args := map[string]string{}
		for _, a := range p.Arguments {
			args[a.Name] = "v"
		}
		if _, err := p.Render(args); err != nil {
			t.Fatalf("a parsed prompt fails to render with every argument: %v", err)
		}
	})
}
