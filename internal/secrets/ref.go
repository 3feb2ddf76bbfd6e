// Package secrets resolves secret references — ${keyring:SERVICE/ACCOUNT},
// ${pass:PATH}, ${file:PATH}, ${age:FILE#KEY}, ${cmd:NAME} — from the stores
// teams already keep them in. Each store is one entry of [Stores]: its name,
// the syntax of its key, a key check (for config validate) and a resolver.
//
// References are resolved at use through a [Resolver], which caches each
// value for a configurable time, registers it with the redactor
// (internal/redact) under the reference's own text, and answers a failure
// with the store's error in words (which store, which key, what to run):
// never an empty value.
package secrets

import (
	"fmt"
	"strings"

	"github.com/agent-tools/agent-tools/internal/text"
)

// Ref is one parsed reference.
type Ref struct {
	Store string // keyring, pass, file, age, cmd
	Key   string // the store's key as written
}

// String is the reference as written in a config: ${store:key}. It is the
// name the redactor shows in place of the value.
func (r Ref) String() string { return "${" + r.Store + ":" + r.Key + "}" }

// IsRef reports whether body (the text between "${" and "}") is a store
// reference rather than ${NAME} or ${NAME:-default}: a colon not followed
// by "-".
func IsRef(body string) bool {
	i := strings.IndexByte(body, ':')
	return i >= 0 && !strings.HasPrefix(body[i+1:], "-")
}

// Parse parses the body of a reference (between "${" and "}"): store:key.
// Errors say what is wrong and, for an unknown store, which one was meant.
func Parse(body string) (Ref, error) {
	for i := 0; i < len(body); i++ {
		if c := body[i]; c < 0x20 || c == 0x7f {
			return Ref{}, fmt.Errorf("malformed secret reference %q: control characters are not allowed", clip(body))
		}
	}
	name, key, ok := strings.Cut(body, ":")
	if !ok {
		return Ref{}, fmt.Errorf("malformed secret reference %q: want ${STORE:KEY} with STORE one of %s", clip(body), storeList())
	}
	if name == "" {
		return Ref{}, fmt.Errorf("malformed secret reference %q: the store before ':' is empty (one of %s)", clip(body), storeList())
	}
	st := Lookup(name)
	if st == nil {
		msg := fmt.Sprintf("unknown secret store %q in ${%s}", clip(name), clip(body))
		if s := text.Suggest(name, Names()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return Ref{}, fmt.Errorf("%s (stores: %s)", msg, storeList())
	}
	if key == "" {
		return Ref{}, fmt.Errorf("malformed secret reference ${%s}: the key after ':' is empty; want ${%s:%s}", clip(body), name, st.Syntax)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c == '$' || c == '{' || c == '}' {
			return Ref{}, fmt.Errorf("malformed secret reference ${%s}: the key may not contain %q", clip(body), string(c))
		}
	}
	if err := st.Check(key); err != nil {
		return Ref{}, fmt.Errorf("malformed secret reference ${%s}: %v; want ${%s:%s}", clip(body), err, name, st.Syntax)
	}
	return Ref{Store: name, Key: key}, nil
}

// ParseRef parses a whole reference, "${store:key}".
func ParseRef(s string) (Ref, error) {
	if !strings.HasPrefix(s, "${") || !strings.HasSuffix(s, "}") || len(s) < 3 {
		return Ref{}, fmt.Errorf("malformed secret reference %q: want ${STORE:KEY}", clip(s))
	}
	return Parse(s[2 : len(s)-1])
}

// Find returns the store references in s (a config value after ${VAR}
// expansion), in order; malformed ones are skipped (the config reported
// them at parse).
func Find(s string) []Ref {
	var out []Ref
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) || s[i+1] != '{' {
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			break
		}
		body := s[i+2 : i+end]
		if IsRef(body) {
			if r, err := Parse(body); err == nil {
				out = append(out, r)
			}
		}
		i += end
	}
	return out
}

func clip(s string) string { return text.Clip(s, 60) }

func storeList() string {
	return strings.Join(Names(), ", ")
}
