package local

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/text"
)

// Header is the interface of a script, read from its leading comment block:
//
//	#!/usr/bin/env bash
//	# @description Deploy the API service. Continuation lines without a tag
//	# append to the tag above them (description or param description).
//	# @param *env string Target environment (staging|production)
//	# @param dry_run boolean Validate without applying
//	# @timeout 5m
//	# @confirm
//
// Rules:
//   - A first line starting with "#!" is skipped (kept in Interpreter).
//   - Comment lines start with "#", "//" or "--" (after indentation). The block
//     ends at the first line that is neither a comment nor blank.
//   - A tag is "@name" followed by a space or the end of the line, so text such
//     as "@acme/api" or "@-tag" in a continuation line is not a tag.
//   - A blank line or an empty comment line ends the current tag's text:
//     untagged lines after it are notes for humans and are ignored, as is any
//     untagged text before the first tag (licence headers, linter pragmas).
//   - Tags (case-insensitive): @description (alias @desc),
//     @param [*]name type [description] (alias @arg; "*" = required),
//     @readonly, @confirm, @timeout <Go duration>. Anything else is an error.
type Header struct {
	Description string
	Params      []Param
	// ReadOnly (@readonly): the tool never needs confirmation.
	ReadOnly bool
	// Confirm (@confirm): the tool always needs confirmation, even when the
	// provider is configured with requireConfirm: false.
	Confirm bool
	// Timeout (@timeout) overrides the provider's deadline; 0 = not set.
	Timeout time.Duration
	// Interpreter is the "#!" line without the "#!" ("" when absent).
	Interpreter string
	// CRLF reports a "#!" line ending in "\r": the kernel then looks for an
	// interpreter whose name ends in a carriage return.
	CRLF bool
}

// Param is one @param line.
type Param struct {
	Name        string
	Type        string // string, boolean, integer, number, array or object
	Description string
	Required    bool
	Line        int // 1-based line of the @param tag
}

// HeaderError is a header problem at a given line.
type HeaderError struct {
	Line int
	Msg  string
}

func (e *HeaderError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ErrNoDescription is returned by ParseHeader when the leading comment block
// has no @description: such a file is not a tool.
var ErrNoDescription = errors.New("no @description in the leading comment block")

var paramTypes = map[string]bool{
	"string": true, "boolean": true, "integer": true, "number": true, "array": true, "object": true,
}

const wantTypes = "want string, boolean, integer, number, array or object"

var knownTags = []string{"description", "param", "readonly", "confirm", "timeout"}

var tagAliases = map[string]string{"desc": "description", "arg": "param"} // Octomind's spellings

func hdrErr(line int, format string, args ...any) error {
	return &HeaderError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ParseHeader reads the leading comment block of a script. It is pure: no I/O.
// The error is a *HeaderError naming the line, or ErrNoDescription.
func ParseHeader(src []byte) (*Header, error) {
	h := &Header{}
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")) // UTF-8 BOM from some editors
	lines := strings.Split(string(src), "\n")
	i := 0
	if len(lines) > 0 && strings.HasPrefix(lines[0], "#!") {
		first := lines[0]
		h.CRLF = strings.HasSuffix(first, "\r")
		h.Interpreter = strings.TrimSpace(utf8Clean(first[2:]))
		i = 1
	}

	// target is the text that an untagged continuation line extends:
	// -1 none, -2 the description, >= 0 the param at that index.
	const none, desc = -1, -2
	target := none
	descLine, timeoutLine, readonlyLine, confirmLine := 0, 0, 0, 0
	seen := map[string]int{} // upper-cased param name -> index

	for ; i < len(lines); i++ {
		n := i + 1
		t := strings.TrimSpace(lines[i])
		if t == "" {
			target = none
			continue
		}
		body, ok := stripComment(t)
		if !ok {
			break
		}
		body = strings.TrimSpace(utf8Clean(body))
		if body == "" {
			target = none
			continue
		}
		tag, rest, isTag := splitTag(body)
		if !isTag {
			switch {
			case target == desc:
				h.Description = join(h.Description, body)
			case target >= 0:
				h.Params[target].Description = join(h.Params[target].Description, body)
			}
			continue
		}
		name := strings.ToLower(tag)
		if a, ok := tagAliases[name]; ok {
			name = a
		}
		target = none
		switch name {
		case "description":
			if descLine == 0 {
				descLine = n
			}
			h.Description = join(h.Description, rest)
			target = desc
		case "param":
			p, err := parseParam(n, rest)
			if err != nil {
				return nil, err
			}
			key := strings.ToUpper(p.Name)
			if j, dup := seen[key]; dup {
				q := h.Params[j]
				if q.Name == p.Name {
					return nil, hdrErr(n, "@param %q: duplicate (first declared on line %d)", p.Name, q.Line)
				}
				return nil, hdrErr(n, "@param %q: clashes with %q on line %d (both are passed as AGENT_TOOLS_PARAM_%s)", p.Name, q.Name, q.Line, key)
			}
			seen[key] = len(h.Params)
			h.Params = append(h.Params, p)
			target = len(h.Params) - 1
		case "readonly", "confirm":
			if rest != "" {
				return nil, hdrErr(n, "@%s takes no value (got %q)", name, rest)
			}
			if name == "readonly" {
				h.ReadOnly, readonlyLine = true, n
			} else {
				h.Confirm, confirmLine = true, n
			}
			if h.ReadOnly && h.Confirm {
				other, otherLine := "@confirm", confirmLine
				if name == "confirm" {
					other, otherLine = "@readonly", readonlyLine
				}
				return nil, hdrErr(n, "@%s conflicts with %s on line %d: a tool is either read-only or always confirmed", name, other, otherLine)
			}
		case "timeout":
			if timeoutLine != 0 {
				return nil, hdrErr(n, "duplicate @timeout (first on line %d)", timeoutLine)
			}
			timeoutLine = n
			if rest == "" {
				return nil, hdrErr(n, "@timeout: missing duration (want a Go duration such as 30s or 5m)")
			}
			d, err := time.ParseDuration(rest)
			if err != nil {
				return nil, hdrErr(n, "@timeout %q: invalid duration (want a Go duration such as 30s or 5m)", rest)
			}
			if d <= 0 {
				return nil, hdrErr(n, "@timeout %q: must be positive", rest)
			}
			h.Timeout = d
		default:
			msg := fmt.Sprintf("unknown tag @%s (known: @description, @param, @readonly, @confirm, @timeout)", tag)
			if s := suggestTag(name); s != "" {
				msg = fmt.Sprintf("unknown tag @%s: did you mean @%s?", tag, s)
			}
			return nil, &HeaderError{Line: n, Msg: msg}
		}
	}
	if h.Description == "" {
		if descLine != 0 {
			return nil, hdrErr(descLine, "@description is empty")
		}
		return nil, ErrNoDescription
	}
	return h, nil
}

// parseParam parses the text after "@param": [*]name type [description].
func parseParam(n int, rest string) (Param, error) {
	const want = `want "@param [*]name type description"`
	nameTok, rest := cutField(rest)
	if nameTok == "" {
		return Param{}, hdrErr(n, "@param: missing name and type (%s)", want)
	}
	p := Param{Line: n}
	p.Name, p.Required = strings.CutPrefix(nameTok, "*")
	if !validName(p.Name) {
		return Param{}, hdrErr(n, "@param %q: invalid name (want letters, digits and _, not starting with a digit)", p.Name)
	}
	typ, rest := cutField(rest)
	if typ == "" {
		return Param{}, hdrErr(n, "@param %q: missing type (%s)", p.Name, wantTypes)
	}
	if !paramTypes[strings.ToLower(typ)] {
		return Param{}, hdrErr(n, "@param %q: unknown type %q (%s)", p.Name, typ, wantTypes)
	}
	p.Type = strings.ToLower(typ)
	p.Description = strings.TrimSpace(rest)
	return p, nil
}

// cutField splits off the first whitespace-separated field of s.
func cutField(s string) (field, rest string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

// validName reports whether s matches [A-Za-z_][A-Za-z0-9_]*: a name that is
// also valid in an environment variable.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// stripComment removes a "#", "//" or "--" comment prefix (and any repeats of
// its character, as in "##" or "---").
func stripComment(t string) (string, bool) {
	switch {
	case strings.HasPrefix(t, "#"):
		return strings.TrimLeft(t, "#"), true
	case strings.HasPrefix(t, "//"):
		return strings.TrimLeft(t, "/"), true
	case strings.HasPrefix(t, "--"):
		return strings.TrimLeft(t, "-"), true
	}
	return "", false
}

// splitTag recognises "@name rest" where name is [A-Za-z][A-Za-z0-9_-]* and is
// followed by whitespace or the end of the line.
func splitTag(body string) (tag, rest string, ok bool) {
	if len(body) < 2 || body[0] != '@' {
		return "", "", false
	}
	c := body[1]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return "", "", false
	}
	i := 2
	for i < len(body) {
		c := body[i]
		if c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			i++
			continue
		}
		break
	}
	if i < len(body) && body[i] != ' ' && body[i] != '\t' {
		return "", "", false
	}
	return body[1:i], strings.TrimSpace(body[i:]), true
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

func utf8Clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// suggestTag returns the known tag closest to an unknown one, if close enough.
func suggestTag(tag string) string {
	norm := strings.NewReplacer("-", "", "_", "").Replace(tag)
	best, bestD := "", 3
	for _, k := range knownTags {
		d := text.Distance(norm, k, 2)
		if strings.HasPrefix(norm, k) || strings.HasPrefix(k, norm) && len(norm) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// Schema is the JSON Schema of the tool's arguments, properties in declaration
// order: {"type":"object","properties":{...},"required":[...],
// "additionalProperties":false} ("required" omitted when empty).
func (h *Header) Schema() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range h.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, p.Name)
		b.WriteString(`:{"type":`)
		writeString(&b, p.Type)
		if p.Description != "" {
			b.WriteString(`,"description":`)
			writeString(&b, p.Description)
		}
		b.WriteByte('}')
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b.WriteByte('}')
	if len(required) > 0 {
		b.WriteString(`,"required":[`)
		for i, r := range required {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, r)
		}
		b.WriteByte(']')
	}
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

// writeString appends s as a JSON string, without HTML escaping (<, >, & stay
// readable in tools/list).
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's trailing newline
}
