// Package argv is the argument-template language of kind cli: each element
// of a tool's argv is a template, and expanding a template never involves a
// shell. It has no dependencies so that both the config validator and the
// cli provider use the one parser.
//
// Grammar of one element (Python-format style):
//
//	literal text        passed as is
//	{name}              the parameter's value; as a whole element it is one
//	                    element (an array: one element per item), never split
//	{flag?text}         a whole element: text when the boolean flag is true,
//	                    nothing otherwise
//	--limit={n}         placeholders embedded in text: still one element,
//	                    dropped whole when a parameter it names is absent
//	{{ and }}           a literal { and }
//
// An element that is exactly {name} and names an absent optional parameter
// (no value, no default) is dropped. Shell metacharacters (; | $() ` > &),
// quotes, spaces and newlines in values are literal bytes of one element.
//
// The "--" rule: a value that lands at the start of an element is refused
// when it begins with "-", unless a literal "--" element comes earlier in
// the template (the program then reads it as an operand, not an option).
// Template authors put "--" before positional parameters such as paths, and
// attach option values to their option (--message={msg}) so that a value
// starting with "-" stays an option's value.
package argv

import (
	"errors"
	"fmt"
	"strings"
)

// Part is a piece of a non-conditional element: literal text, or a
// placeholder when Param is set.
type Part struct {
	Text  string
	Param string
}

// Elem is one parsed argv element.
type Elem struct {
	// Parts make up a plain element (literal text and placeholders).
	Parts []Part
	// Cond and CondText are set for a conditional element {Cond?CondText}.
	Cond, CondText string
}

// Literal reports whether the element has no placeholder, and its text.
func (e Elem) Literal() (string, bool) {
	if e.Cond != "" {
		return "", false
	}
	var b strings.Builder
	for _, p := range e.Parts {
		if p.Param != "" {
			return "", false
		}
		b.WriteString(p.Text)
	}
	return b.String(), true
}

// Whole returns the parameter of an element that is exactly {name}.
func (e Elem) Whole() (string, bool) {
	if e.Cond == "" && len(e.Parts) == 1 && e.Parts[0].Param != "" {
		return e.Parts[0].Param, true
	}
	return "", false
}

// startsWithValue reports whether the element's first byte comes from a value.
func (e Elem) startsWithValue() bool {
	for _, p := range e.Parts {
		if p.Param != "" {
			return true
		}
		if p.Text != "" {
			return false
		}
	}
	return false
}

// Params lists the parameters the element names, in order.
func (e Elem) Params() []string {
	if e.Cond != "" {
		return []string{e.Cond}
	}
	var out []string
	for _, p := range e.Parts {
		if p.Param != "" {
			out = append(out, p.Param)
		}
	}
	return out
}

// SyntaxError is a malformed element; Offset is the byte where it went wrong.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at byte %d: %s", e.Offset, e.Msg) }

// ValidName reports whether s can name a parameter in a template: a letter
// or _, then letters, digits, _ or -.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && (c == '-' || '0' <= c && c <= '9'):
		default:
			return false
		}
	}
	return true
}

// ParseElem parses one element.
func ParseElem(s string) (Elem, error) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return Elem{}, &SyntaxError{i, "contains a NUL byte, which no program argument can hold"}
	}
	var e Elem
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			e.Parts = append(e.Parts, Part{Text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '}':
			if i+1 < len(s) && s[i+1] == '}' {
				lit.WriteByte('}')
				i++
				continue
			}
			return Elem{}, &SyntaxError{i, `unmatched "}" (write "}}" for a literal brace)`}
		case '{':
			if i+1 < len(s) && s[i+1] == '{' {
				lit.WriteByte('{')
				i++
				continue
			}
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return Elem{}, &SyntaxError{i, `unclosed "{" (write "{{" for a literal brace)`}
			}
			body := s[i+1 : i+1+end]
			name, text, cond := strings.Cut(body, "?")
			if !ValidName(name) {
				return Elem{}, &SyntaxError{i, fmt.Sprintf("invalid placeholder %q: want {name} or {flag?text}, with a name of letters, digits, _ and - (write {{ for a literal brace)", "{"+body+"}")}
			}
			if cond {
				switch {
				case strings.ContainsRune(text, '{'):
					return Elem{}, &SyntaxError{i + 1 + len(name) + 1, fmt.Sprintf("the text of %q cannot contain a brace", "{"+body+"}")}
				case i != 0 || i+1+end+1 != len(s):
					return Elem{}, &SyntaxError{i, fmt.Sprintf("the conditional %q must be a whole argv element", "{"+body+"}")}
				case text == "":
					return Elem{}, &SyntaxError{i, fmt.Sprintf("the conditional %q needs the text to emit, as in {%s?--%s}", "{"+body+"}", name, name)}
				}
				return Elem{Cond: name, CondText: text}, nil
			}
			flush()
			e.Parts = append(e.Parts, Part{Param: name})
			i += end + 1
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	if len(e.Parts) == 0 {
		e.Parts = []Part{{Text: ""}} // an explicit empty argument
	}
	return e, nil
}

// Template is a parsed argv.
type Template struct {
	Elems []Elem
	// sep is the index of the first literal "--" element (-1: none).
	sep int
}

// ElemError is a syntax error in element Index.
type ElemError struct {
	Index int
	Err   error
}

func (e *ElemError) Error() string { return fmt.Sprintf("argv[%d]: %v", e.Index, e.Err) }
func (e *ElemError) Unwrap() error { return e.Err }

// Parse parses every element; the error joins one *ElemError per bad element.
func Parse(argv []string) (*Template, error) {
	t := &Template{Elems: make([]Elem, len(argv)), sep: -1}
	var errs []error
	for i, s := range argv {
		e, err := ParseElem(s)
		if err != nil {
			errs = append(errs, &ElemError{i, err})
			continue
		}
		t.Elems[i] = e
		if lit, ok := e.Literal(); ok && lit == "--" && t.sep < 0 {
			t.sep = i
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// Param is what the template language needs to know of a parameter.
type Param struct {
	// Type is a JSON type: string, boolean, integer, number, array or object.
	Type string
	// Items is the type of an array's items ("" = any scalar).
	Items    string
	Required bool
	// Default is used when the argument is absent (nil = none). It must be a
	// JSON value as decoded by [DecodeArgs] (see [Normalize]).
	Default any
}

// Problem is a template that does not fit its parameters.
type Problem struct {
	Index int
	// Unknown is set when the problem is a placeholder naming no parameter.
	Unknown string
	Msg     string
}

// Check reports placeholders that name no parameter, a program (argv[0])
// that is not literal, arrays inside text and conditionals over
// non-booleans.
func (t *Template) Check(params map[string]Param) []Problem {
	var out []Problem
	for i, e := range t.Elems {
		if i == 0 {
			if _, ok := e.Literal(); !ok {
				out = append(out, Problem{Index: 0, Msg: "the program (argv[0]) must be literal text, never a parameter"})
				continue
			}
		}
		for _, name := range e.Params() {
			p, ok := params[name]
			switch {
			case !ok:
				out = append(out, Problem{Index: i, Unknown: name, Msg: fmt.Sprintf("unknown parameter {%s}", name)})
			case e.Cond != "" && p.Type != "boolean":
				out = append(out, Problem{Index: i, Msg: fmt.Sprintf("{%s?%s} needs a boolean parameter, but %s is %s", name, e.CondText, name, article(p.Type))})
			case p.Type == "array":
				if _, whole := e.Whole(); !whole {
					out = append(out, Problem{Index: i, Msg: fmt.Sprintf("array parameter {%s} must be a whole argv element (it expands to one element per item)", name)})
				}
			}
		}
	}
	return out
}

func article(typ string) string {
	if typ == "" {
		return "untyped"
	}
	if strings.ContainsRune("aeiou", rune(typ[0])) {
		return "an " + typ
	}
	return "a " + typ
}

// Unused lists the parameters no element names.
func (t *Template) Unused(params map[string]Param) []string {
	used := map[string]bool{}
	for _, e := range t.Elems {
		for _, n := range e.Params() {
			used[n] = true
		}
	}
	var out []string
	for n := range params {
		if !used[n] {
			out = append(out, n)
		}
	}
	return out
}

// OptionSensitive lists the parameters whose value can begin an element
// before any literal "--": a value starting with "-" there is refused.
func (t *Template) OptionSensitive() map[string]bool {
	out := map[string]bool{}
	for i, e := range t.Elems {
		if t.sep >= 0 && i > t.sep {
			break
		}
		if e.startsWithValue() {
			out[e.Parts[firstParam(e)].Param] = true
		}
	}
	return out
}

func firstParam(e Elem) int {
	for i, p := range e.Parts {
		if p.Param != "" {
			return i
		}
	}
	return 0
}
