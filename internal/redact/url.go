package redact

import (
	"net/url"
	"strings"
)

// URL renders a configured URL (or a file path) for people: the userinfo
// password and every query value masked as ***, the fragment dropped, then
// every secret [Default] knows replaced by its [Marker] (a variable in the
// path: "[redacted: VAR]").
// Use it wherever a URL from the config is printed: doctor, list warnings,
// logs, help and status texts, error messages.
func URL(raw string) string { return Default.String(MaskURL(raw)) }

// MaskURL is [URL] without the redactor: the userinfo password and query
// values masked as ***, the fragment dropped. A text that is not an
// absolute URL (a file path) is returned as is; one that does not parse
// keeps only what precedes its userinfo or query.
func MaskURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Unparsable: keep the scheme and the host (after any userinfo),
		// mask the rest.
		scheme, rest, _ := strings.Cut(raw, "://")
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			rest = rest[i+1:]
		}
		return scheme + "://" + rest + "/" + Mask
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			// url.UserPassword would escape the mask as %2A%2A%2A.
			u.User = url.UserPassword(u.User.Username(), maskHolder)
		}
	}
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if k, _, ok := strings.Cut(p, "="); ok {
				parts[i] = k + "=" + Mask
			} else if p != "" {
				// A bare value (?token) may be the credential itself.
				parts[i] = Mask
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	return strings.Replace(u.String(), ":"+maskHolder+"@", ":"+Mask+"@", 1)
}

const maskHolder = "MASKED-PASSWORD-b1f0"
