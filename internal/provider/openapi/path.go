package openapi

import (
	"fmt"
	"net/url"
	"path"
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

// underBase reports whether u is the base URL or below it, comparing the
// paths as a server may read them: %2e, %2f and %5c decoded (also when
// encoded twice), "\" taken as "/", and dot segments removed (RFC 3986
// 5.2.4, with Tomcat's "..;x" counted as ".."). A path that leaves the base
// under either reading of empty segments (kept, or collapsed as path.Clean
// does) is not under it: Location: /api/%2e%2e/admin, /api/..%2fadmin and a
// document path /api/../admin all stay outside.
func underBase(base, u *url.URL) bool {
	if !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Host, base.Host) {
		return false
	}
	bp := strings.TrimRight(removeDotSegments(decodeDelims(base.EscapedPath())), "/")
	up := decodeDelims(u.EscapedPath())
	inside := func(p string) bool { return bp == "" || p == bp || strings.HasPrefix(p, bp+"/") }
	return inside(removeDotSegments(up)) && inside(path.Clean("/"+up))
}

// decodeDelims decodes the escapes that can turn text into path structure
// (%2e ".", %2f "/", %5c "\", and %25 "%" for double encoding) and maps "\"
// to "/"; other escapes stay as they are.
func decodeDelims(p string) string {
	for range 4 {
		if !strings.ContainsAny(p, "%\\") {
			return p
		}
		q := delimDecoder.Replace(p)
		if q == p {
			return p
		}
		p = q
	}
	return p
}

var delimDecoder = strings.NewReplacer(
	"%2e", ".", "%2E", ".", "%2f", "/", "%2F", "/", "%5c", "/", "%5C", "/", "\\", "/", "%25", "%")

// removeDotSegments is RFC 3986 section 5.2.4 over a path's segments; a
// segment whose part before ";" is "." or ".." counts as that dot segment.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		d, _, _ := strings.Cut(s, ";")
		last := i == len(segs)-1
		switch d {
		case ".":
		case "..":
			if len(out) > 1 || (len(out) == 1 && out[0] != "") {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			continue
		}
		if last {
			out = append(out, "")
		}
	}
	return strings.Join(out, "/")
}

// dotSegments reports whether a document's path template has a segment
// that reads as "." or ".." once escapes are decoded.
func dotSegments(tmpl string) bool {
	for seg := range strings.SplitSeq(decodeDelims(tmpl), "/") {
		d, _, _ := strings.Cut(seg, ";")
		if d == "." || d == ".." {
			return true
		}
	}
	return false
}
