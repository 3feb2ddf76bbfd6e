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
// published as an MCP tool (flat mode, see CheckLength).
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
	ErrEmpty = errors.New("empty name component")
	// ErrTooLong is returned by CheckLength only: a long name is never an
	// error of identity, only of publication.
	ErrTooLong     = errors.New("name too long")
	ErrInvalidUTF8 = errors.New("not valid UTF-8")
	ErrDuplicate   = errors.New("duplicate name")
	// ErrMalformed is wrapped by every error of DecodeComponent, Decode and Split.
	ErrMalformed = errors.New("malformed canonical name")
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

// IsHostLocal reports whether a provider's flat names are bare tool names.
func IsHostLocal(provider string) bool {
	return provider == ProviderLocal || provider == ProviderBuiltin
}

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

// EncodeProvider is EncodeComponent(s, false).
func EncodeProvider(s string) string { return EncodeComponent(s, false) }

// EncodeTool is EncodeComponent(s, true).
func EncodeTool(s string) string { return EncodeComponent(s, true) }

// DecodeComponent is the inverse of EncodeComponent(s, true), the tool
// component encoding (a raw '_' is accepted). Use Decode for provider
// components. It fails, wrapping ErrMalformed, on anything
// EncodeComponent cannot produce.
func DecodeComponent(s string) (string, error) { return Decode(s, true) }

// Decode is the exact inverse of EncodeComponent(_, allowUnderscore): it
// succeeds only on strings EncodeComponent produces, so
// EncodeComponent(Decode(s)) == s whenever err == nil. It rejects
// unterminated escapes, non-hex or uppercase hex digits, leading zeros,
// empty escapes, surrogates and values past U+10FFFF, escapes of characters
// that are kept raw, and raw characters that would have been escaped.
func Decode(s string, allowUnderscore bool) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != 'z' {
			if c >= utf8.RuneSelf || !keep(rune(c), allowUnderscore) {
				r, _ := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && c >= utf8.RuneSelf {
					return "", malformed(s, i, "invalid byte 0x%02x", c)
				}
				return "", malformed(s, i, "character %q must be escaped", r)
			}
			b.WriteByte(c)
			i++
			continue
		}
		// Escape: 'z' hex+ 'z'.
		j := i + 1
		for j < len(s) && s[j] != 'z' {
			d := s[j]
			if !('0' <= d && d <= '9' || 'a' <= d && d <= 'f') {
				if 'A' <= d && d <= 'F' {
					return "", malformed(s, j, "uppercase hex digit %q in escape", d)
				}
				if j-i-1 == 0 {
					return "", malformed(s, i, "'z' must start an escape like z7az")
				}
				return "", malformed(s, j, "non-hex character %q in escape", d)
			}
			if j-i-1 >= 6 {
				return "", malformed(s, i, "escape longer than 6 hex digits")
			}
			j++
		}
		if j >= len(s) {
			return "", malformed(s, i, "unterminated escape")
		}
		hex := s[i+1 : j]
		if hex == "" {
			return "", malformed(s, i, "empty escape \"zz\"")
		}
		if hex[0] == '0' && len(hex) > 1 {
			return "", malformed(s, i, "escape %q has leading zeros", s[i:j+1])
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil { // unreachable: at most 6 validated digits
			return "", malformed(s, i, "bad escape %q", s[i:j+1])
		}
		r := rune(v)
		switch {
		case v > utf8.MaxRune:
			return "", malformed(s, i, "escape %q is past U+10FFFF", s[i:j+1])
		case 0xD800 <= v && v <= 0xDFFF:
			return "", malformed(s, i, "escape %q is a surrogate", s[i:j+1])
		case keep(r, allowUnderscore):
			return "", malformed(s, i, "escape %q encodes %q, which is written raw", s[i:j+1], r)
		}
		b.WriteRune(r)
		i = j + 1
	}
	return b.String(), nil
}

func malformed(s string, at int, format string, args ...any) error {
	return fmt.Errorf("%w %q at byte %d: %s", ErrMalformed, s, at, fmt.Sprintf(format, args...))
}

// LosslessName returns the canonical name of a provider's tool under the reversible
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

// CheckLength reports whether name can be published as a flat MCP tool
// under a limit of max bytes (max <= 0 means MaxLen). The error is a
// *NameError wrapping ErrTooLong.
func CheckLength(provider, tool, name string, max int) error {
	if max <= 0 {
		max = MaxLen
	}
	if len(name) <= max {
		return nil
	}
	return &NameError{Provider: provider, Tool: tool, Err: ErrTooLong,
		Reason: fmt.Sprintf("name %q is %d characters, over the %d limit", name, len(name), max)}
}

// Split undoes LosslessName for a prefixed name: the provider is the part before
// the first '_' (provider components never contain a raw '_'), the tool the
// rest; both are decoded. Errors wrap ErrMalformed. Bare host-local names
// have no provider part: decode them with DecodeComponent.
func Split(canonical string) (provider, tool string, err error) {
	p, t, ok := strings.Cut(canonical, "_")
	if !ok {
		return "", "", fmt.Errorf("%w %q: no '_' between provider and tool", ErrMalformed, canonical)
	}
	if p == "" || t == "" {
		return "", "", fmt.Errorf("%w %q: empty provider or tool component", ErrMalformed, canonical)
	}
	if provider, err = Decode(p, false); err != nil {
		return "", "", err
	}
	if tool, err = Decode(t, true); err != nil {
		return "", "", err
	}
	return provider, tool, nil
}

// Owner identifies who holds a canonical name.
type Owner struct {
	Provider string
	Tool     string
}

// Set assigns canonical names and rejects duplicates (for example a local
// script "gh_x" against tool "x" of provider "gh"). The zero value names by
// the Readable scheme; a Set is not safe for concurrent use.
type Set struct {
	Scheme Scheme
	owners map[string]Owner
}

// Add computes the canonical name of (provider, tool) and claims it. On a
// collision it returns a *NameError wrapping ErrDuplicate that names the
// first owner; the first owner keeps the name.
func (s *Set) Add(provider, tool string, hostLocal bool) (string, error) {
	name, err := s.Scheme.Canonical(provider, tool, hostLocal)
	if err != nil {
		return "", err
	}
	if prev, dup := s.owners[name]; dup {
		return "", &NameError{Provider: provider, Tool: tool, Err: ErrDuplicate,
			Reason: fmt.Sprintf("name %q is already used by tool %q of provider %q", name, prev.Tool, prev.Provider)}
	}
	if s.owners == nil {
		s.owners = make(map[string]Owner)
	}
	s.owners[name] = Owner{Provider: provider, Tool: tool}
	return name, nil
}

// Lookup returns the owner of a canonical name.
func (s *Set) Lookup(canonical string) (Owner, bool) {
	o, ok := s.owners[canonical]
	return o, ok
}

// Len is the number of names claimed.
func (s *Set) Len() int { return len(s.owners) }
