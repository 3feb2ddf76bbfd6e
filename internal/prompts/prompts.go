// Package prompts serves Markdown files with front matter as MCP prompts
// (docs/providers/builtins.md), so every client with prompts/list gets the same
// commands. A file looks like:
//
//	---
//	name: review
//	description: Review a change for bugs and risky patterns.
//	arguments:
//	  - name: path
//	    description: File or directory to review
//	    required: true
//	---
//	Review {{path}} and list concrete problems, most severe first.
//
// Placeholders are {{name}} of declared arguments; an undeclared placeholder
// is a load error, a missing required argument a get error.
package prompts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.yaml.in/yaml/v3"
)

// Prompt is one loaded prompt.
type Prompt struct {
	Name        string
	Description string
	Arguments   []Argument
	Body        string
}

// Argument is one declared prompt argument.
type Argument struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Required    bool   `yaml:"required"`
}

type frontMatter struct {
	Name        string     `yaml:"name"`
	Description string     `yaml:"description"`
	Arguments   []Argument `yaml:"arguments"`
}

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	argPattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	placeholder = regexp.MustCompile(`\{\{\s*([^{}\s]*)\s*\}\}`)
)

// Parse reads one prompt file; fallbackName (the file's base name without
// extension) names it when the front matter does not.
func Parse(fallbackName string, src []byte) (*Prompt, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("not valid UTF-8")
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	var fm frontMatter
	body := string(src)
	if rest, ok := strings.CutPrefix(body, "---\n"); ok {
		head, tail, found := strings.Cut("\n"+rest, "\n---")
		if !found {
			return nil, errors.New("front matter starts with --- but never ends")
		}
		if tail != "" && tail[0] != '\n' {
			return nil, errors.New("the closing --- of the front matter must be alone on its line")
		}
		dec := yaml.NewDecoder(strings.NewReader(head))
		dec.KnownFields(true)
		if err := dec.Decode(&fm); err != nil && !errors.Is(err, io.EOF) { // EOF: empty front matter
			return nil, fmt.Errorf("front matter: %v", err)
		}
		body = strings.TrimPrefix(tail, "\n")
	}
	p := &Prompt{Name: fm.Name, Description: strings.TrimSpace(fm.Description), Arguments: fm.Arguments, Body: strings.TrimSpace(body)}
	if p.Name == "" {
		p.Name = fallbackName
	}
	if !namePattern.MatchString(p.Name) {
		return nil, fmt.Errorf("prompt name %q: use letters, digits, '_', '.' or '-' (at most 64)", p.Name)
	}
	if p.Body == "" {
		return nil, errors.New("the prompt has no text after its front matter")
	}
	declared := map[string]bool{}
	for i, a := range p.Arguments {
		if !argPattern.MatchString(a.Name) {
			return nil, fmt.Errorf("arguments[%d]: bad argument name %q", i, a.Name)
		}
		if declared[a.Name] {
			return nil, fmt.Errorf("arguments[%d]: %q declared twice", i, a.Name)
		}
		declared[a.Name] = true
	}
	for _, m := range placeholder.FindAllStringSubmatch(p.Body, -1) {
		if !declared[m[1]] {
			return nil, fmt.Errorf("placeholder {{%s}} is not a declared argument", m[1])
		}
	}
	return p, nil
}

// Render substitutes the arguments into the body. A missing required or an
// undeclared argument is a *jsonrpc.Error with code -32602 (invalid
// params): a handler returning it makes prompts/get answer with that code,
// where any other error would go out with code 0.
func (p *Prompt) Render(args map[string]string) (string, error) {
	var missing []string
	for _, a := range p.Arguments {
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return "", invalidParams("prompt %q needs argument(s): %s", p.Name, strings.Join(missing, ", "))
	}
	for k := range args {
		if !p.declares(k) {
			return "", invalidParams("prompt %q has no argument %q", p.Name, k)
		}
	}
	return placeholder.ReplaceAllStringFunc(p.Body, func(m string) string {
		return args[placeholder.FindStringSubmatch(m)[1]]
	}), nil
}

func invalidParams(format string, a ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

func (p *Prompt) declares(name string) bool {
	for _, a := range p.Arguments {
		if a.Name == name {
			return true
		}
	}
	return false
}
