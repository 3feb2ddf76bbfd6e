package openapi

import (
	"fmt"
	"net/url"
	"strings"
)

// buildPath substitutes the parameters of an OpenAPI path template
// ("/repos/{owner}/{repo}") and escapes each value as one path segment. A
// value that could change which resource the path names is refused before
// any request: one holding "/", "\", "?", "#", an encoded slash, dot or
// backslash, a scheme ("://"), a control character, or that would make a
// segment "." or "..". Dots inside a value ("main...topic") stay.
func buildPath(tmpl string, value func(name string) (string, bool)) (string, error) {
	if !strings.HasPrefix(tmpl, "/") {
		return "", fmt.Errorf("path %q does not start with /", tmpl)
	}
	var b strings.Builder
	b.Grow(len(tmpl) + 16)
	for seg := range strings.SplitSeq(tmpl[1:], "/") {
		b.WriteByte('/')
		raw, err := substitute(seg, value)
		if err != nil {
			return "", err
		}
		if raw.hasParam && (raw.plain == "." || raw.plain == "..") {
			return "", fmt.Errorf("path parameters would make the segment %q (path traversal)", raw.plain)
		}
		b.WriteString(raw.escaped)
	}
	return b.String(), nil
}

type segment struct {
	plain, escaped string
	hasParam       bool
}

func substitute(seg string, value func(string) (string, bool)) (segment, error) {
	var plain, esc strings.Builder
	out := segment{}
	for seg != "" {
		i := strings.IndexByte(seg, '{')
		if i < 0 {
			plain.WriteString(seg)
			esc.WriteString(seg)
			break
		}
		j := strings.IndexByte(seg[i:], '}')
		if j < 0 {
			return out, fmt.Errorf("path template segment %q has an unclosed {", seg)
		}
		plain.WriteString(seg[:i])
		esc.WriteString(seg[:i])
		name := seg[i+1 : i+j]
		v, ok := value(name)
		if !ok {
			return out, fmt.Errorf("path parameter %q is missing", name)
		}
		if err := checkSegmentValue(name, v); err != nil {
			return out, err
		}
		plain.WriteString(v)
		esc.WriteString(url.PathEscape(v))
		out.hasParam = true
		seg = seg[i+j+1:]
	}
	out.plain, out.escaped = plain.String(), esc.String()
	return out, nil
}

// checkSegmentValue refuses a value that is not exactly one path segment.
func checkSegmentValue(name, v string) error {
	bad := func(why string) error {
		return fmt.Errorf("path parameter %q %s: a path parameter is one segment, never a path or a URL", name, why)
	}
	if v == "" {
		return bad("is empty")
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '/' || c == '\\':
			return bad("contains a slash")
		case c == '?' || c == '#':
			return bad(fmt.Sprintf("contains %q", c))
		case c < 0x20 || c == 0x7f:
			return bad("contains a control character")
		case c == '%' && i+2 < len(v):
			switch strings.ToLower(v[i+1 : i+3]) {
			case "2f", "5c", "2e", "3f", "23", "25":
				return bad("contains an encoded slash, dot or delimiter")
			}
		}
	}
	if strings.Contains(v, "://") {
		return bad("is a URL")
	}
	if v == "." || v == ".." {
		return bad("is " + v)
	}
	return nil
}
