package pins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
)

// maxField bounds each side of a field in a one-line diff: doctor and logs
// show what changed, not whole documents.
const maxField = 160

// FieldChange is one field of a definition that differs, with both sides
// as a person reads them: text as it is, JSON canonical (keys sorted) and
// indented, so that a line-level diff shows exactly what changed.
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
	// Lines is the line-level diff of Old and New.
	Lines []Line `json:"lines"`
}

// Line is one line of a diff: Op is " " (both), "-" (old only) or "+"
// (new only).
type Line struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Canonical is raw JSON with its object keys sorted, indented by two
// spaces; what is not JSON is returned as it is.
func Canonical(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	b, err := jsonscan.Marshal(v) // maps: keys sorted; no HTML escaping
	if err != nil {
		return string(raw)
	}
	var out bytes.Buffer
	if json.Indent(&out, bytes.TrimSpace(b), "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

// fields are a definition's fields as a person reads them, in order.
func fields(d catalog.Definition) [][2]string {
	ann := ""
	if d.Annotations != nil {
		if b, err := json.Marshal(d.Annotations); err == nil {
			ann = Canonical(b)
		}
	}
	flag := func(b bool) string {
		if b {
			return "true"
		}
		return ""
	}
	return [][2]string{
		{"name", d.Name}, {"title", d.Title}, {"description", d.Description},
		{"inputSchema", Canonical(d.InputSchema)}, {"outputSchema", Canonical(d.OutputSchema)},
		{"readOnly", flag(d.ReadOnly)}, {"alwaysConfirm", flag(d.AlwaysConfirm)},
		{"annotations", ann}, {"icons", Canonical(d.Icons)}, {"_meta", Canonical(d.Meta)},
	}
}

// Changes lists, field by field, how b differs from a (canonical JSON
// compared: a re-ordered or re-indented schema is no change).
func Changes(a, b catalog.Definition) []FieldChange {
	fa, fb := fields(a), fields(b)
	var out []FieldChange
	for i := range fa {
		if fa[i][1] != fb[i][1] {
			out = append(out, FieldChange{Field: fa[i][0], Old: fa[i][1], New: fb[i][1], Lines: LineDiff(fa[i][1], fb[i][1])})
		}
	}
	return out
}

// Equal reports whether a and b are the same definition, comparing JSON
// canonically.
func Equal(a, b catalog.Definition) bool { return len(Changes(a, b)) == 0 }

// Diff says, field by field, how b differs from a: one short line per
// changed field ("description: \"old\" → \"new\"").
func Diff(a, b catalog.Definition) string {
	var lines []string
	for _, c := range Changes(a, b) {
		x, y := around(compact(c.Old), compact(c.New))
		lines = append(lines, fmt.Sprintf("%s: %s → %s", c.Field, clip(x), clip(y)))
	}
	return strings.Join(lines, "; ")
}

// compact puts canonical JSON back on one line for the one-line diff.
func compact(s string) string {
	if !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
		return s
	}
	var out bytes.Buffer
	if json.Compact(&out, []byte(s)) != nil {
		return s
	}
	return out.String()
}

// Unified renders the changes for a terminal: each field's name, then its
// lines prefixed by "-", "+" or " " (unchanged lines far from a change
// are left out).
func Unified(cs []FieldChange, indent string) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s%s:\n", indent, c.Field)
		for i, l := range c.Lines {
			if l.Op == " " && !near(c.Lines, i, 2) {
				if i == 0 || near(c.Lines, i-1, 2) {
					fmt.Fprintf(&b, "%s  …\n", indent)
				}
				continue
			}
			fmt.Fprintf(&b, "%s  %s %s\n", indent, l.Op, l.Text)
		}
	}
	return b.String()
}

// near reports whether a changed line is within n lines of i.
func near(ls []Line, i, n int) bool {
	for j := max(0, i-n); j <= min(len(ls)-1, i+n); j++ {
		if ls[j].Op != " " {
			return true
		}
	}
	return false
}

// maxDiffCells bounds the line diff's table; past it the diff is the old
// lines removed and the new ones added.
const maxDiffCells = 4 << 20

// LineDiff is the line-level diff of a and b (longest common subsequence).
// A single-line text is split into sentences first, so that a change
// inside a long description shows as the sentence that changed.
func LineDiff(a, b string) []Line {
	x, y := split(a), split(b)
	// Common prefix and suffix first: most changes are small.
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	q := 0
	for q < len(x)-p && q < len(y)-p && x[len(x)-1-q] == y[len(y)-1-q] {
		q++
	}
	var out []Line
	for _, l := range x[:p] {
		out = append(out, Line{" ", l})
	}
	mx, my := x[p:len(x)-q], y[p:len(y)-q]
	if len(mx)*len(my) > maxDiffCells {
		for _, l := range mx {
			out = append(out, Line{"-", l})
		}
		for _, l := range my {
			out = append(out, Line{"+", l})
		}
	} else {
		out = append(out, lcs(mx, my)...)
	}
	for _, l := range x[len(x)-q:] {
		out = append(out, Line{" ", l})
	}
	return out
}

func lcs(x, y []string) []Line {
	n, m := len(x), len(y)
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var out []Line
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case x[i] == y[j]:
			out = append(out, Line{" ", x[i]})
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			out = append(out, Line{"-", x[i]})
			i++
		default:
			out = append(out, Line{"+", y[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, Line{"-", x[i]})
	}
	for ; j < m; j++ {
		out = append(out, Line{"+", y[j]})
	}
	return out
}

// split cuts a text into lines, and lines into sentences.
func split(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		start := 0
		for i := 0; i+1 < len(line); i++ {
			if (line[i] == '.' || line[i] == '!' || line[i] == '?' || line[i] == ';') && line[i+1] == ' ' {
				out = append(out, line[start:i+1])
				start = i + 2
			}
		}
		out = append(out, line[start:])
	}
	return out
}

// clip quotes s, keeping the start and end of a long value.
func clip(s string) string {
	r := []rune(s)
	if len(r) > maxField {
		s = string(r[:maxField/2]) + "…" + string(r[len(r)-maxField/2:])
	}
	return fmt.Sprintf("%q", s)
}

// around0 is how much unchanged text around a change a diff keeps.
const around0 = 24

// around cuts x and y to the part that differs, with a little context on
// either side ("…" where text was cut), so that a change in the middle of
// a long description is what the diff shows.
func around(x, y string) (string, string) {
	a, b := []rune(x), []rune(y)
	if len(a) <= maxField && len(b) <= maxField {
		return x, y
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	cut := func(r []rune) string {
		from, to := max(0, p-around0), min(len(r), len(r)-s+around0)
		out := string(r[from:to])
		if from > 0 {
			out = "…" + out
		}
		if to < len(r) {
			out += "…"
		}
		return out
	}
	return cut(a), cut(b)
}
