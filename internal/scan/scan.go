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
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// Mode is security.scan.
type Mode string

const (
	// Off scans nothing.
	Off Mode = "off"
	// Warn reports findings (doctor, pins list, console, audit) and holds
	// nothing back.
	Warn Mode = "warn"
	// HoldHigh is the default (security.scan unset): a tool with a high
	// finding is held back until a person approves its definition, as under
	// Quarantine; medium and low findings are reported, as under Warn.
	HoldHigh Mode = "hold-high"
	// Quarantine also holds a tool with a high or medium finding back until
	// a person approves its definition, as a changed pin is.
	Quarantine Mode = "quarantine"
)

// Default is the mode in force when security.scan is not set.
const Default = HoldHigh

// Modes are the values security.scan accepts.
var Modes = []Mode{Off, Warn, HoldHigh, Quarantine}

// ParseMode reads security.scan ("" is Default).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return Default, nil
	case Off, Warn, HoldHigh, Quarantine:
		return Mode(s), nil
	}
	return "", fmt.Errorf("security.scan: %q is not off, warn, hold-high or quarantine", s)
}

// Effective is m with "" read as Default.
func (m Mode) Effective() Mode {
	if m == "" {
		return Default
	}
	return m
}

// Holding returns the findings that hold a tool back under m: none under
// off and warn, the high ones under hold-high (and ""), the high and medium
// ones under quarantine. It is the one place that decides whether the
// scanner holds a definition back; every reader (the pins, the registry's
// doctor lines and teaching errors, the console) asks it.
func (m Mode) Holding(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if m.holds(f.Severity) {
			out = append(out, f)
		}
	}
	return out
}

// Holds reports whether a definition with findings fs is held back under m.
func (m Mode) Holds(fs []Finding) bool { return len(m.Holding(fs)) > 0 }

func (m Mode) holds(s Severity) bool {
	switch m.Effective() {
	case HoldHigh:
		return s == High
	case Quarantine:
		return s == High || s == Medium
	}
	return false
}

// Setting is how doctor and the teaching errors name m:
// "security.scan: quarantine"; "security.scan: hold-high, the default" for
// hold-high and "".
func (m Mode) Setting() string {
	if m.Effective() == Default {
		return "security.scan: " + string(Default) + ", the default"
	}
	return "security.scan: " + string(m)
}

// Severity orders findings.
type Severity string

const (
	High   Severity = "high"
	Medium Severity = "medium"
	Low    Severity = "low"
)

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
const Version = "2"

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
	desc := normalize(t.Description) // read once, for the rules and the shadowing rules
	out = append(out, scanView("description", desc, true)...)
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
		out = append(out, names.shadowing(t, desc.text)...)
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

// Text runs every rule on one field's text: the character rules on the
// text as it is, the keyword rules on it normalised (normalize.go), with
// its HTML comments left out too, and on the text its base64 decodes to.
func Text(field, s string) []Finding { return scanText(field, s, true) }

func scanText(field, s string, decode bool) []Finding {
	return scanView(field, normalize(s), decode)
}

// scanView is scanText on s's view.
func scanView(field string, v view, decode bool) []Finding {
	if v.orig == "" {
		return nil
	}
	var out []Finding
	if v.mapped() {
		out = append(out, hidden(field, v.orig)...)
	}
	fd := cues.find(v.text)
	slots := v.match(field, fd, nil)
	if a := v.alt(); a != nil {
		slots = a.match(field, cues.find(a.text), slots)
	}
	if fd.comment {
		fs, stripped := comments(field, &v)
		out = append(out, fs...)
		if stripped != nil {
			slots = stripped.match(field, cues.find(stripped.text), slots)
		}
	}
	for _, f := range slots { // in the rules' order, not the map's: the same text, the same findings
		if f != nil {
			out = append(out, *f)
		}
	}
	if decode && len(fd.base64) > 0 {
		for _, f := range base64Text(field, &v, fd) {
			if !slices.ContainsFunc(out, func(o Finding) bool { return o.Rule == f.Rule }) {
				out = append(out, f)
			}
		}
	}
	return out
}

// match runs the keyword rules on v where fd found their cues, for the
// rules with no finding in slots yet (indexed as textRules; nil: none).
func (v *view) match(field string, fd found, slots []*Finding) []*Finding {
	s := v.text
	for ri := range textRules {
		at := fd.spots[ri]
		if len(at) == 0 || slots != nil && slots[ri] != nil {
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
				if slots == nil {
					slots = make([]*Finding, len(textRules))
				}
				slots[ri] = &Finding{Rule: r.ID, Severity: r.Severity, Field: field, Match: v.excerpt(p+loc[0], p+loc[1])}
				break
			}
		}
	}
	return slots
}

// excerpt quotes the original text that v.text[a:b] was read from and,
// when that differs, what it was read as and the characters that differ.
func (v *view) excerpt(a, b int) string {
	if !v.mapped() {
		return excerpt(v.text, "", a, b)
	}
	from, to := v.span(a, b)
	m := excerpt(v.orig, "", from, to)
	if v.orig[from:to] == v.text[a:b] {
		return m
	}
	var cps []string
	for _, r := range v.orig[from:to] {
		if r >= utf8.RuneSelf && len(cps) < 6 {
			if c := fmt.Sprintf("U+%04X", r); !slices.Contains(cps, c) {
				cps = append(cps, c)
			}
		}
	}
	m += fmt.Sprintf(" (read as %q", quote(v.text[a:b]))
	if len(cps) > 0 {
		m += " from " + strings.Join(cps, " ")
	}
	return m + ")"
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

// Brief is findings without their matched text, for what a model reads
// (a held tool's teaching error) and a one-line log: "high
// ignore-instructions in description, high credential-path in
// description". The matched text is the poisoned text itself; a person
// reads it in doctor, pins list and the console.
func Brief(fs []Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = string(f.Severity) + " " + f.Rule + " in " + f.Field
	}
	return strings.Join(parts, ", ")
}

// RuleIDs are the findings' rule ids, each once, in order.
func RuleIDs(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	return out
}
