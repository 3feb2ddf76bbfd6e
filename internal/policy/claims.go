package policy

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
)

// Claims are the verified token claims per-identity rules name, in a
// canonical, comparable form (JSON of name → sorted values) so that the
// grant cache can key on them. "" means none (static tokens, stdio, or no
// rule names a claim).
type Claims string

// ClaimsExtraKey is where the HTTP transport puts a caller's Claims in the
// SDK's TokenInfo.Extra, for the facade to hand to the pipeline.
const ClaimsExtraKey = "agent-tools/claims"

// SelectClaims keeps, of a verified token's claims, those named (the
// Access's ClaimNames), each as text values: a string as itself, a boolean
// or number as its JSON text, an array as its elements of those kinds.
// Objects, null and nested arrays give nothing (no rule matches them).
func SelectClaims(raw map[string]json.RawMessage, names []string) Claims {
	if len(names) == 0 || len(raw) == 0 {
		return ""
	}
	out := map[string][]string{}
	for _, n := range names {
		v, ok := raw[n]
		if !ok {
			continue
		}
		if vals := claimValues(v); len(vals) > 0 {
			sort.Strings(vals)
			out[n] = slices.Compact(vals)
		}
	}
	if len(out) == 0 {
		return ""
	}
	b, _ := json.Marshal(out) // map keys sorted: one spelling per set of claims
	return Claims(b)
}

func claimValues(v json.RawMessage) []string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil
	}
	if v[0] == '[' {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return nil
		}
		var out []string
		for _, it := range items {
			if s, ok := scalarClaim(it); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if s, ok := scalarClaim(v); ok {
		return []string{s}
	}
	return nil
}

func scalarClaim(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		var s string
		return s, json.Unmarshal(v, &s) == nil
	case c == 't' || c == 'f':
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return "", false
		}
		return string(v), true
	case c == '-' || '0' <= c && c <= '9':
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return "", false
		}
		return n.String(), true
	}
	return "", false
}

// decode is the inverse of SelectClaims' encoding (only when a grant is
// first worked out: grants are cached).
func (c Claims) decode() map[string][]string {
	if c == "" {
		return nil
	}
	var m map[string][]string
	if json.Unmarshal([]byte(c), &m) != nil {
		return nil
	}
	return m
}

// claimsMatch reports whether every claim a rule names has one of its
// listed values among the token's (a rule naming claims never matches a
// caller without them).
func claimsMatch(want map[string][]string, have map[string][]string) bool {
	for name, vals := range want {
		got := have[name]
		if !slices.ContainsFunc(vals, func(v string) bool { return slices.Contains(got, v) }) {
			return false
		}
	}
	return true
}
