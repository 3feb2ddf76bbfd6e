package naming

import (
	"fmt"
	"strconv"
	"strings"
)

// Scheme selects how canonical names are built (config `naming:`).
type Scheme string

const (
	// Readable keeps A–Z a–z 0–9 _ - and rewrites the rest (the default).
	Readable Scheme = "readable"
	// Lossless is the injective z<hex>z encoding (naming.go).
	Lossless Scheme = "lossless"
)

// Schemes lists the accepted scheme names.
var Schemes = []string{string(Readable), string(Lossless)}

// ParseScheme validates a scheme name; "" is Readable.
func ParseScheme(s string) (Scheme, error) {
	switch Scheme(s) {
	case "", Readable:
		return Readable, nil
	case Lossless:
		return Lossless, nil
	}
	return "", fmt.Errorf("unknown naming scheme %q (want readable or lossless)", s)
}

// Other is the scheme not in force (for "this rule would match under…" hints).
func (s Scheme) Other() Scheme {
	if s == Lossless {
		return Readable
	}
	return Lossless
}

func (s Scheme) String() string {
	if s == "" {
		return string(Readable)
	}
	return string(s)
}

// Canonical names (provider, tool) under s; the zero Scheme is Readable.
// Errors are *NameError wrapping ErrEmpty or ErrInvalidUTF8; there is no
// length limit (flat mode applies one, MaxLen by default).
func (s Scheme) Canonical(provider, tool string, hostLocal bool) (string, error) {
	if s == Lossless {
		return LosslessName(provider, tool, hostLocal)
	}
	return Canonical(provider, tool, hostLocal)
}

// Canonical returns the canonical name of a provider's tool under the
// default Readable scheme: "<provider>_<tool>", or bare "<tool>" when
// hostLocal (then provider is only used in errors). Errors are *NameError
// wrapping ErrEmpty or ErrInvalidUTF8.
func Canonical(provider, tool string, hostLocal bool) (string, error) {
	if err := check(provider, tool, hostLocal); err != nil {
		return "", err
	}
	name := ReadableComponent(tool)
	if !hostLocal {
		name = ReadableComponent(provider) + "_" + name
	}
	return name, nil
}

// Safe reports whether every model API accepts r in a function name as is.
func Safe(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-'
}

// ReadableComponent rewrites one component: safe characters stay as they
// are, any other ASCII character ('.', '/', ':', space…) becomes '_', and a
// non-ASCII character becomes 'u' + its lowercase hexadecimal code point
// ("café" → "cafue9"). The rule looks at one character at a time, so the
// result never depends on the other tools or their order.
func ReadableComponent(s string) string {
	clean := true
	for _, r := range s {
		if !Safe(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case Safe(r):
			b.WriteRune(r)
		case r < 0x80:
			b.WriteByte('_')
		default:
			b.WriteByte('u')
			b.WriteString(strconv.FormatUint(uint64(r), 16))
		}
	}
	return b.String()
}

// Verbatim is the canonical name of a passthrough provider's tool: the
// upstream's own name, exactly (only empty and invalid UTF-8 names fail).
func Verbatim(provider, tool string) (string, error) {
	if err := check(provider, tool, true); err != nil {
		return "", err
	}
	return tool, nil
}

// SchemeOf is the naming scheme of a catalog that says it (the registry,
// the app's live catalog), else the default: callers that hold only a
// catalog interface name skills and prompts as its tools are named.
func SchemeOf(cat any) Scheme {
	if s, ok := cat.(interface{ Scheme() Scheme }); ok {
		return s.Scheme()
	}
	return Readable
}
