// Package naming builds the canonical names of tools (docs/modes.md, "Names").
//
// A tool's identity is (provider id, the tool's own name); its canonical name
// is "<provider>_<tool>", or bare "<tool>" for the host-local providers
// ("local" and "builtin"), under one of two schemes:
//
//   - Readable (the default, readable.go): the characters every major model
//     API accepts in a function name (A–Z a–z 0–9 _ -) stay exactly as the
//     backend spells them; every other character is rewritten by one fixed,
//     per-character rule. It is not injective: the registry detects the
//     collisions it causes and an operator resolves them with a rename.
//   - Lossless (this file): each component keeps a–y and 0–9 (the
//     tool component also keeps '_'); every other code point, including 'z'
//     itself, is written as 'z' + lowercase hexadecimal code point + 'z'. The
//     encoding is injective, so the remote identity can always be recovered
//     from the name, and its output is plain ASCII over [a-z0-9_].
//
// Names have no length limit here: a limit applies only where a name is
// published as an MCP tool (flat mode: MaxLen unless the config sets one).
package naming

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLen is the default longest name published as a flat MCP tool, in bytes:
// the function-name limit of the OpenAI, Gemini and Anthropic APIs.
const MaxLen = 64

// Host-local provider ids: their tools' flat names carry no prefix.
const (
	ProviderLocal   = "local"
	ProviderBuiltin = "builtin"
)

// Sentinel errors wrapped by *NameError (use errors.Is).
var (
	ErrEmpty       = errors.New("empty name component")
	ErrInvalidUTF8 = errors.New("not valid UTF-8")
)

// NameError explains why a (provider, tool) pair has no valid canonical name.
type NameError struct {
	Provider string
	Tool     string
	// Reason is the human explanation, e.g.
	// `name "..." is 70 characters, over the 64 limit`.
	Reason string
	// Err is one of the sentinel errors above.
	Err error
}

func (e *NameError) Error() string {
	return fmt.Sprintf("tool %q of provider %q: %s", e.Tool, e.Provider, e.Reason)
}

func (e *NameError) Unwrap() error { return e.Err }

// keep reports whether r stays as itself in a component.
func keep(r rune, allowUnderscore bool) bool {
	return ('a' <= r && r <= 'y') || ('0' <= r && r <= '9') || (allowUnderscore && r == '_')
}

// EncodeComponent encodes one name component. s must be valid UTF-8: each
// invalid byte is encoded as U+FFFD, which loses information (Canonical
// rejects invalid UTF-8 instead). allowUnderscore is true for the tool
// component and false for the provider component.
func EncodeComponent(s string, allowUnderscore bool) string {
	n := 0
	for _, r := range s {
		if keep(r, allowUnderscore) {
			n++
		} else {
			n += 8
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, r := range s {
		if keep(r, allowUnderscore) {
			b.WriteByte(byte(r))
			continue
		}
		b.WriteByte('z')
		b.WriteString(strconv.FormatUint(uint64(r), 16))
		b.WriteByte('z')
	}
	return b.String()
}

// LosslessName returns the canonical name of a provider's tool under the
// lossless encoding: "<provider>_<tool>", or bare "<tool>" when hostLocal
// (then provider is only used in errors). Errors are *NameError wrapping
// ErrEmpty or ErrInvalidUTF8.
func LosslessName(provider, tool string, hostLocal bool) (string, error) {
	if err := check(provider, tool, hostLocal); err != nil {
		return "", err
	}
	name := EncodeComponent(tool, true)
	if !hostLocal {
		name = EncodeComponent(provider, false) + "_" + name
	}
	return name, nil
}

// check rejects what no scheme can name: empty or invalid UTF-8 components.
func check(provider, tool string, hostLocal bool) error {
	fail := func(err error, reason string) error {
		return &NameError{Provider: provider, Tool: tool, Reason: reason, Err: err}
	}
	if !hostLocal {
		if provider == "" {
			return fail(ErrEmpty, "empty provider id")
		}
		if !utf8.ValidString(provider) {
			return fail(ErrInvalidUTF8, "provider id is not valid UTF-8")
		}
	}
	if tool == "" {
		return fail(ErrEmpty, "empty tool name")
	}
	if !utf8.ValidString(tool) {
		return fail(ErrInvalidUTF8, "tool name is not valid UTF-8")
	}
	return nil
}
