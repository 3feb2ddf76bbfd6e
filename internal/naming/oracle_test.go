package naming

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The runtime never decodes a lossless name: the registry keeps each
// name's owner. The decoder lives here as the tests' oracle, proving the
// encoding injective (every encoded name decodes back to what was encoded,
// and only encoded names decode at all).

// errMalformed is wrapped by every error of decode and split.
var errMalformed = errors.New("malformed canonical name")

// decode is the exact inverse of EncodeComponent(_, allowUnderscore): it
// succeeds only on strings EncodeComponent produces, so
// EncodeComponent(decode(s)) == s whenever err == nil. It rejects
// unterminated escapes, non-hex or uppercase hex digits, leading zeros,
// empty escapes, surrogates and values past U+10FFFF, escapes of characters
// that are kept raw, and raw characters that would have been escaped.
func decode(s string, allowUnderscore bool) (string, error) {
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
	return fmt.Errorf("%w %q at byte %d: %s", errMalformed, s, at, fmt.Sprintf(format, args...))
}

// split undoes LosslessName for a prefixed name: the provider is the part before
// the first '_' (provider components never contain a raw '_'), the tool the
// rest; both are decoded. Errors wrap errMalformed. Bare host-local names
// have no provider part: decode them with decode(name, true).
func split(canonical string) (provider, tool string, err error) {
	p, t, ok := strings.Cut(canonical, "_")
	if !ok {
		return "", "", fmt.Errorf("%w %q: no '_' between provider and tool", errMalformed, canonical)
	}
	if p == "" || t == "" {
		return "", "", fmt.Errorf("%w %q: empty provider or tool component", errMalformed, canonical)
	}
	if provider, err = decode(p, false); err != nil {
		return "", "", err
	}
	if tool, err = decode(t, true); err != nil {
		return "", "", err
	}
	return provider, tool, nil
}
