package facade

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		line string
		want *Command
		err  bool
	}{
		{"help", &Command{Verb: "help"}, false},
		{"search list open issues", &Command{Verb: "search", Query: "list open issues"}, false},
		{"gh discover", &Command{Verb: "discover", Provider: "gh"}, false},
		{"gh discover 'pull requests'", &Command{Verb: "discover", Provider: "gh", Query: "pull requests"}, false},
		{`github call get_repo owner=withastro repo="astro site" --confirm`, &Command{Verb: "call", Provider: "github", Tool: "get_repo", Confirm: true,
			Pairs: []Pair{{Key: "owner", Value: "withastro"}, {Key: "repo", Value: "astro site"}}}, false},
		{`gh call create labels:='["a","b"]' --confirm=ct_x`, &Command{Verb: "call", Provider: "gh", Tool: "create", ConfirmToken: "ct_x",
			Pairs: []Pair{{Key: "labels", Value: `["a","b"]`, JSON: true}}}, false},
		{"gh call x 'a=$(rm -rf /)' b=`id`;c", &Command{Verb: "call", Provider: "gh", Tool: "x",
			Pairs: []Pair{{Key: "a", Value: "$(rm -rf /)"}, {Key: "b", Value: "`id`;c"}}}, false},
		{"gh call x a=$(rm -rf /)", nil, true}, // "-rf" is a separate word, and not key=value
		{"", nil, true},
		{"help me", nil, true},
		{"search", nil, true},
		{"gh", nil, true},
		{"gh frob", nil, true},
		{"gh call", nil, true},
		{"gh call a=b", nil, true},
		{"gh call x novalue", nil, true},
		{"gh call x =v", nil, true},
		{"gh call x a=1 a=2", nil, true},
		{"gh call x a:={bad", nil, true},
		{`gh call x a="unterminated`, nil, true},
	}
	for _, tc := range tests {
		got, err := ParseCommand(tc.line)
		if (err != nil) != tc.err {
			t.Errorf("%q: err = %v", tc.line, err)
			continue
		}
		if !tc.err && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.line, got, tc.want)
		}
	}
}

func TestCommandArgumentsAreTypedBySchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"ok":{"type":"boolean"},"s":{"type":"string"}}}`)
	c, _ := ParseCommand(`p call t n=42 ok=true s=42 x=free tags:=[1]`)
	got, err := c.arguments(schema)
	if err != nil || string(got) != `{"n":42,"ok":true,"s":"42","tags":[1],"x":"free"}` {
		t.Fatalf("got %s %v", got, err)
	}
	for _, line := range []string{"p call t n=abc", "p call t ok=maybe"} {
		c, _ := ParseCommand(line)
		if _, err := c.arguments(schema); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
}

// FuzzParseCommand: any line gives a command or an error, never a panic; a
// parsed call re-rendered by textShape parses back to the same arguments.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"help", "call gh_get_repo owner=a", "gh call get_repo owner=a repo='b c' --confirm", "x call y k:={\"a\":[1]}", "search a b", `a call b c="\"q\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 160 { // a command line, not a document: keeps minimisation fast
			return
		}
		c, err := ParseCommand(line)
		if err != nil || c.Verb != "call" {
			return
		}
		args, err := c.arguments(nil)
		if err != nil {
			return
		}
		cmd := textShape{provider: c.Provider, canonical: c.Provider == ""}.Call(c.Tool, args, nil)["arguments"].(map[string]any)["command"].(string)
		back, err := ParseCommand(cmd)
		if err != nil {
			t.Fatalf("re-rendered %q does not parse: %v", cmd, err)
		}
		args2, err := back.arguments(nil)
		if err != nil || string(args2) != string(args) {
			t.Fatalf("round trip: %s -> %q -> %s (%v)", args, cmd, args2, err)
		}
	})
}
