package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// printable makes text from tools, upstreams and their --version lines safe
// for a terminal: control characters other than newline and tab (ESC, NUL,
// carriage return, C1 controls, DEL) are shown escaped (\x1b, \x00) instead
// of moving the cursor, recolouring or clearing the screen. Invalid UTF-8
// bytes are shown as \xNN too. --json output needs none of this.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case needsEscape(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == utf8.RuneError:
		return true // invalid UTF-8 (or a literal U+FFFD, harmless to show escaped)
	case r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069'):
		return true // line separators and bidirectional overrides reorder what is shown
	}
	return false
}
