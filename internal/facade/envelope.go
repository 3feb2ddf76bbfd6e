package facade

import (
	"encoding/json"
	"strings"
)

// A call meta-tool's envelope is {<name key>, arguments, confirm}. Models
// spell its keys in other ways (`tool_name`, `ToolName`, `name` for the
// name; `args`, `params`, `input` for the arguments): an envelope key that
// is a near miss of one of the meta-tool's own keys is read as that key,
// so such a call just works instead of being taught. Only unambiguous
// cases are read so; the others stay as they are and get the teaching
// error, whose correct_shape is built from the envelope as read here (the
// right name, and the arguments where they belong).

// foldKey is a key compared loosely: lower case, without _ - and spaces.
func foldKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ':
			return -1
		}
		return r
	}, strings.ToLower(k))
}

// nameKeyRank is how surely a key names the tool (lower is surer; 0: not a
// name key): `tool_name` and its spellings, then `tool`, then `name`, the
// weakest, which is also a common argument of tools themselves.
func nameKeyRank(k string) int {
	switch foldKey(k) {
	case "toolname":
		return 1
	case "tool", "toolid":
		return 2
	case "name":
		return 3
	}
	return 0
}

// argsKeys are the folded spellings read as `arguments`.
var argsKeys = map[string]bool{
	"arguments": true, "argument": true, "args": true, "arg": true, "params": true, "parameters": true,
	"input": true, "inputs": true, "toolinput": true, "toolargs": true, "toolarguments": true, "toolparams": true,
}

// readEnvelope renames the near misses in an envelope m whose name key is
// nameKey (alias the other mode's spelling, read by the caller) to the
// meta-tool's own keys, in place, and reports whether it changed m.
// hasParam, when set, reports whether the named tool has a parameter of
// that name: such a key is the tool's own argument spread beside the name,
// never the envelope's `arguments`.
func readEnvelope(m map[string]json.RawMessage, nameKey, alias string, hasParam func(tool, key string) bool) bool {
	changed := false
	own := func(k string) bool { return k == nameKey || k == alias || k == "arguments" || k == "confirm" }
	if _, ok := m[nameKey]; !ok {
		if _, ok := m[alias]; !ok {
			best, rank, tie := "", 0, false
			for k, v := range m {
				r := nameKeyRank(k)
				if r == 0 || own(k) || !nonEmptyString(v) {
					continue
				}
				switch {
				case rank == 0 || r < rank:
					best, rank, tie = k, r, false
				case r == rank:
					tie = tie || string(v) != string(m[best])
				}
			}
			if best != "" && !tie {
				m[nameKey] = m[best]
				delete(m, best)
				changed = true
			}
		}
	}
	if _, ok := m["arguments"]; !ok {
		var tool string
		for _, k := range []string{nameKey, alias} {
			if json.Unmarshal(m[k], &tool) == nil && tool != "" {
				break
			}
		}
		found, n := "", 0
		for k, v := range m {
			if own(k) || !argsKeys[foldKey(k)] || !isObject(v) && strings.TrimSpace(string(v)) != "null" {
				continue
			}
			if hasParam != nil && tool != "" && hasParam(tool, k) {
				continue // the tool's own argument of that name
			}
			found, n = k, n+1
		}
		if n == 1 {
			m["arguments"] = m[found]
			delete(m, found)
			changed = true
		}
	}
	return changed
}

func nonEmptyString(v json.RawMessage) bool {
	var s string
	return json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) != ""
}

// hasParamIn reports whether a tool's input schema has a top-level property
// named key.
func hasParamIn(schema json.RawMessage, key string) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	_, ok := s.Properties[key]
	return ok
}
