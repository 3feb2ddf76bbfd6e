package pins

import (
	"fmt"
	"strings"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// maxField bounds each side of a field in a diff: doctor and logs show
// what changed, not whole documents.
const maxField = 160

// Diff says, field by field, how b differs from a: one short line per
// changed field ("description: \"old\" → \"new\"").
func Diff(a, b catalog.Definition) string {
	var lines []string
	add := func(field, x, y string) {
		if x != y {
			x, y = around(x, y)
			lines = append(lines, fmt.Sprintf("%s: %s → %s", field, clip(x), clip(y)))
		}
	}
	add("name", a.Name, b.Name)
	add("title", a.Title, b.Title)
	add("description", a.Description, b.Description)
	add("inputSchema", string(a.InputSchema), string(b.InputSchema))
	add("outputSchema", string(a.OutputSchema), string(b.OutputSchema))
	add("readOnly", fmt.Sprint(a.ReadOnly), fmt.Sprint(b.ReadOnly))
	add("alwaysConfirm", fmt.Sprint(a.AlwaysConfirm), fmt.Sprint(b.AlwaysConfirm))
	return strings.Join(lines, "; ")
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
