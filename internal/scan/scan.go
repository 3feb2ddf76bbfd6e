// Package scan checks tool definitions for poisoning before a model sees
// them (docs/pins.md, "Scanning definitions"): hidden or bidirectional
// Unicode and tag characters, instructions aimed at the model, references
// to secrets and well-known credential paths, exfiltration URLs and
// markdown images, and shadowing (a description that instructs about
// another provider's tool, a name one edit away from another provider's).
//
// The rules are data (rules.go): an id, a severity, the literal cues that
// make a rule worth running on a text, and the pattern that decides. Every
// published field is scanned: name, title, description, the schemas
// (every string in them: descriptions, defaults, examples, property
// names), _meta and icons, and prompt texts.
package scan

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// Mode is security.scan.
type Mode string

const (
	// Off scans nothing.
	Off Mode = "off"
	// Warn reports findings (doctor, pins list, console, audit).
	Warn Mode = "warn"
	// Quarantine also holds a tool with a high or medium finding back until
	// a person approves its definition, as a changed pin is.
	Quarantine Mode = "quarantine"
)

// ParseMode reads security.scan ("" is Warn).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Warn:
		return Warn, nil
	case Off, Quarantine:
		return Mode(s), nil
	}
	return "", fmt.Errorf("security.scan: %q is not off, warn or quarantine", s)
}

// Severity orders findings.
type Severity string

const (
	High   Severity = "high"
	Medium Severity = "medium"
	Low    Severity = "low"
)

// Holds reports whether a finding of this severity holds a tool back under
// security.scan: quarantine.
func (s Severity) Holds() bool { return s == High || s == Medium }

// Finding is one rule that matched one field of a definition.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Field is where: "description", "inputSchema", "_meta", "name"...
	Field string `json:"field"`
	// Match is the matched text with a little context, quoted so that
	// hidden characters show (U+202E, not the character itself).
	Match string `json:"match"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s in %s: %s", f.Severity, f.Rule, f.Field, f.Match)
}

// Version names the rule set: a definition scanned clean by the same
// version need not be scanned again (the pin store remembers it).
const Version = "1"

// Other is a tool of another provider, for the shadowing rules.
type Other struct {
	Provider  string
	Name      string // the tool's own name
	Canonical string
}

// Tool scans one definition. others are the tools of the other providers
// (nil: no shadowing check); names is their lookup table (NewNames).
func Tool(t catalog.Tool, names *Names) []Finding {
	var out []Finding
	text := func(field, s string) {
		out = append(out, Text(field, s)...)
	}
	text("name", t.Name)
	text("title", t.Title)
	text("description", t.Description)
	out = append(out, JSON("inputSchema", t.InputSchema)...)
	out = append(out, JSON("outputSchema", t.OutputSchema)...)
	if t.Upstream != nil {
		out = append(out, JSON("_meta", t.Upstream.Meta)...)
		out = append(out, JSON("icons", t.Upstream.Icons)...)
		if a := t.Upstream.Annotations; a != nil {
			text("annotations.title", a.Title)
		}
	}
	if names != nil {
		out = append(out, names.shadowing(t)...)
	}
	return out
}

// Prompt scans a prompt's published texts (name, title, description, and
// its arguments' names and descriptions).
func Prompt(name, title, description string, args ...string) []Finding {
	var out []Finding
	out = append(out, Text("prompt name", name)...)
	out = append(out, Text("prompt title", title)...)
	out = append(out, Text("prompt description", description)...)
	for _, a := range args {
		out = append(out, Text("prompt argument", a)...)
	}
	return out
}

// JSON scans every string of a JSON document (keys and values): schemas'
// descriptions, defaults and examples, _meta, icons. The raw bytes are
// scanned as text unless they hold an escape, which could hide a cue
// (\u0069gnore); then the strings are decoded first.
func JSON(field string, raw json.RawMessage) []Finding {
	if len(raw) == 0 {
		return nil
	}
	if !strings.Contains(string(raw), `\u`) {
		return Text(field, string(raw)) // escapes such as \" and \n hide no cue
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return Text(field, string(raw))
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				b.WriteString(k)
				b.WriteByte('\n')
				walk(e)
			}
		}
	}
	walk(v)
	return Text(field, b.String())
}

// Text runs every rule on one field's text.
func Text(field, s string) []Finding {
	if s == "" {
		return nil
	}
	var out []Finding
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		out = append(out, hidden(field, s)...)
	}
	spots := cues.find(s)
	for ri := range textRules { // in the rules' order, not the map's: the same text, the same findings
		at := spots[ri]
		if len(at) == 0 {
			continue
		}
		r := &textRules[ri]
		for _, p := range at {
			if r.WordStart && p > 0 && wordByte(s[p-1]) {
				continue
			}
			to := min(len(s), p+window)
			for to < len(s) && s[to]&0xC0 == 0x80 {
				to++
			}
			if loc := r.re.FindStringIndex(lower(s[p:to])); loc != nil {
				out = append(out, Finding{Rule: r.ID, Severity: r.Severity, Field: field, Match: excerpt(s, "", p+loc[0], p+loc[1])})
				break
			}
		}
	}
	return out
}

func wordByte(c byte) bool {
	return c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// lower is s in ASCII lower case (a copy only when s has upper case), so
// that a rule's offsets into it are offsets into s.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// window is how much text from a cue on a rule's pattern reads.
const window = 240

// context is how much text around a match a finding quotes.
const context = 30

// excerpt quotes s[from:to] with some context, on rune boundaries.
func excerpt(s, _ string, from, to int) string {
	a, b := max(0, from-context), min(len(s), to+context)
	for a > 0 && !utf8.RuneStart(s[a]) {
		a--
	}
	for b < len(s) && !utf8.RuneStart(s[b]) {
		b++
	}
	out := strings.Join(strings.Fields(s[a:b]), " ")
	if a > 0 {
		out = "…" + out
	}
	if b < len(s) {
		out += "…"
	}
	return quote(out)
}

// quote shows invisible and control characters as U+XXXX.
func quote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if invisible(r) || r < 0x20 && r != '\n' && r != '\t' {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Summary is findings in one line each, for doctor and logs.
func Summary(fs []Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// Holding returns the findings that hold a tool back under quarantine.
func Holding(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity.Holds() {
			out = append(out, f)
		}
	}
	return out
}
