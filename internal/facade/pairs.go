package facade

import (
	"encoding/json"
	"fmt"
)

// PairArguments builds a call's arguments from text mode's words:
// key=value (typed by the tool's schema: integer, number, boolean, else a
// string) and key:=<json> (arrays, objects, null). The command line's
// `agent-tools call NAME key=value` reads them so.
func PairArguments(words []string, schema json.RawMessage) (json.RawMessage, error) {
	c := &Command{}
	seen := map[string]bool{}
	for _, w := range words {
		p, err := parsePair(w)
		if err != nil {
			return nil, err
		}
		if seen[p.Key] {
			return nil, fmt.Errorf("argument %q given twice", p.Key)
		}
		seen[p.Key] = true
		c.Pairs = append(c.Pairs, p)
	}
	return c.arguments(schema)
}
