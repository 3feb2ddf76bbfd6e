package config

import (
	"fmt"
	"strings"

	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/text"
)

// interpolation is the outcome of expanding one scalar value.
type interpolation struct {
	value   string
	vars    []string // variables referenced (set or not)
	vals    []string // their values as substituted, parallel to vars
	missing []string // variables not set and without default
	// refs are the secret-store references (${keyring:…}, ${pass:…}, …):
	// they stay in value as written and are resolved at use (secretrefs.go).
	refs []secrets.Ref
}

// interpolate expands ${NAME} and ${NAME:-default} from env; $$ is a literal
// $. A secret-store reference (${STORE:KEY}, internal/secrets) is checked
// and kept as written, to be resolved at use. Any other use of $ is an error, so that a $HOME meant as a reference
// is never silently taken literally. Error messages quote only text taken
// from the file, never values from env.
func interpolate(s string, env func(string) (string, bool)) (interpolation, error) {
	var res interpolation
	if !strings.Contains(s, "$") {
		res.value = s
		return res, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		if i+1 >= len(s) || s[i+1] != '{' {
			return res, fmt.Errorf("lone %q at offset %d: write $$ for a literal $, or ${NAME} for an environment variable", "$", i)
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return res, fmt.Errorf("unterminated reference %q: missing '}'", clip(s[i:]))
		}
		ref := s[i : i+end+1] // ${...}
		body := ref[2 : len(ref)-1]
		if secrets.IsRef(body) {
			r, err := secrets.Parse(body)
			if err != nil {
				return res, err
			}
			res.refs = append(res.refs, r)
			b.WriteString(ref)
			i += end + 1
			continue
		}
		name, def, hasDef := strings.Cut(body, ":-")
		if !validVarName(name) {
			return res, fmt.Errorf("malformed reference %q: want ${NAME} or ${NAME:-default} with NAME of letters, digits and _, not starting with a digit", clip(ref))
		}
		if hasDef && strings.Contains(def, "$") {
			return res, fmt.Errorf("malformed reference %q: a default cannot contain $ or nested references", clip(ref))
		}
		res.vars = append(res.vars, name)
		v, ok := env(name)
		switch {
		case hasDef && (!ok || v == ""):
			v = def
		case !ok:
			res.missing = append(res.missing, name)
		}
		res.vals = append(res.vals, v)
		b.WriteString(v)
		i += end + 1
	}
	res.value = b.String()
	return res, nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// clip shortens file text quoted in messages.
func clip(s string) string { return text.Clip(s, 40) }
