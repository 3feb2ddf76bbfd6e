// Package redact is the runtime's one redactor: it knows every secret value
// the runtime holds (values interpolated from ${VAR} into secret-bearing
// config places, inbound tokens, login-flow tokens) and replaces each of them
// by a marker naming it, [Marker] ("[redacted: VAR]"), wherever text leaves
// the runtime — tool results and error texts, log records, audit lines,
// doctor and list output, metrics labels and HTTP error bodies. The marker
// is never a "${VAR}" reference: a backend that echoes a secret must not
// look like a configuration whose interpolation never ran.
//
// Replacement is by exact value, never partial, and covers the encodings a
// value takes on its way out: URL query and path escaping, JSON string
// escaping as any common encoder writes it (also JSON inside JSON), HTML
// escaping, and base64 (standard and URL alphabets, at any alignment inside a
// longer base64 text, as in an "Authorization: Basic" header). Values shorter
// than [MinLen] are not registered, so that $LANG or a port number does not
// turn output into noise. Every encoded form of a value is replaced by the
// same marker, unencoded.
//
// One process-wide set, [Default], is what the boundaries use: a secret known
// to any configuration this process loaded must be scrubbed from every output
// of the process, including outputs of components that never saw that
// configuration. Values are never removed (a reload that drops a provider
// does not make its old token publishable).
package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// MinLen is the shortest value that is redacted.
const MinLen = 6

// Mask replaces the query values and password of a configured URL printed
// for people (see [URL], [MaskURL]).
const Mask = "***"

// Redacted is the marker of a secret that has no name: a credential written
// literally in the config (a URL's access_token=…), or one an openapi
// provider was given in code.
const Redacted = "[redacted]"

// markerPrefix starts every named marker.
const markerPrefix = "[redacted: "

// Marker is the text that replaces a secret value in every output: for a
// value named name, "[redacted: " + name + "]" — the variable's name
// ("[redacted: MYKEY]"), a secret reference without its ${} ("[redacted:
// keyring:github/token]", "[redacted: file:/run/secrets/pg]"), or a
// description ("[redacted: upstream access token]"); for an empty name,
// [Redacted]. The marker is inserted unescaped into every encoding (JSON
// text, HTML pages, URLs), so it holds no character that JSON or HTML
// escapes — in a name, " ' < > &, control characters, U+2028, U+2029 and
// invalid UTF-8 become _, a backslash (a Windows path) becomes / — and no
// "{" or "}": it can never be mistaken for a "${…}" reference ("[", "]",
// ":" and space are kept as they are by every JSON encoder and read fine
// in a URL shown to people).
func Marker(name string) string {
	if name == "" {
		return Redacted
	}
	return markerPrefix + clean(name) + "]"
}

// clean makes a name safe to insert into JSON, HTML and URL text as is.
func clean(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\\':
			return '/'
		case r == '{':
			return '('
		case r == '}':
			return ')'
		case r == '"' || r == '\'' || r == '<' || r == '>' || r == '&' || r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == utf8.RuneError:
			return '_'
		}
		return r
	}, name)
}

// replacement is what Add's name becomes: a bare name is wrapped by
// [Marker]; a text already built from markers (the userinfo pair
// "[redacted: USER]:[redacted: PASS]") is kept; "" and [Mask] mean no
// name; a name written as references ("${KEY}", "${USER}:${PASS}",
// "${keyring:s/a}") has each reference turned into its marker, so that no
// redacted output ever holds "${".
func replacement(name string) string {
	switch {
	case name == "" || name == Mask || name == Redacted:
		return Redacted
	case strings.Contains(name, markerPrefix):
		return clean(name)
	case !strings.Contains(name, "${"):
		return Marker(name)
	}
	var b strings.Builder
	rest, refs := name, 0
	for ; ; refs++ {
		i := strings.Index(rest, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(rest[:i])
		b.WriteString(Marker(rest[i+2 : i+j]))
		rest = rest[i+j+1:]
	}
	if refs == 0 { // "${" without its "}": not a reference
		return Marker(name)
	}
	b.WriteString(rest)
	// An unterminated reference's rest is kept, its brace made harmless.
	return clean(b.String())
}

// Default is the process-wide set every output boundary applies.
var Default = New()

// Add registers value under name in [Default]; see [Set.Add].
func Add(name, value string) { Default.Add(name, value) }

// String scrubs s with [Default]; see [Set.String].
func String(s string) string { return Default.String(s) }

// Set is a concurrency-safe collection of secret values.
type Set struct {
	mu    sync.Mutex
	names map[string]string // form of a value → replacement
	// rep is rebuilt on Add and read without locking: scrubbing is on every
	// output path, adding happens at config load.
	rep atomic.Pointer[replacer]
	n   atomic.Int64 // number of forms, 0 = nothing to do
}

// New returns an empty set.
func New() *Set { return &Set{names: map[string]string{}} }

// Add registers value as a secret shown as [Marker](name). name is
// normally the variable's name ("KEY", shown "[redacted: KEY]"); a secret
// reference's text without its ${} ("keyring:github/token"); a
// description of a value that has no variable ("upstream access token");
// "" for none (shown [Redacted]). A text already built from markers is
// kept as it is (a value built from several variables, URL userinfo:
// "[redacted: USER]:[redacted: PASS]"), and a name written as references
// ("${KEY}") is shown as the same markers as its bare form. Values shorter
// than MinLen are ignored. Adding the same value twice keeps the first
// name.
func (s *Set) Add(name, value string) {
	if len(value) < MinLen {
		return
	}
	name = replacement(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, f := range forms(value) {
		if len(f) < MinLen {
			continue
		}
		if _, ok := s.names[f]; !ok {
			s.names[f] = name
			added = true
		}
	}
	if !added {
		return
	}
	keys := make([]string, 0, len(s.names))
	for k := range s.names {
		keys = append(keys, k)
	}
	// Longest first: at one position the longer form wins (strings.Replacer
	// prefers earlier pairs), so a value is never replaced partially.
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, s.names[k])
	}
	r := newReplacer(pairs, keys)
	s.rep.Store(r)
	s.n.Store(int64(len(keys)))
}

// Len is the number of registered forms (for tests and doctor).
func (s *Set) Len() int { return int(s.n.Load()) }

// String returns s with every known secret replaced by its marker.
func (s *Set) String(text string) string {
	if s.n.Load() == 0 || text == "" {
		return text
	}
	return s.rep.Load().replace(text)
}

// Bytes is String for byte slices; it returns b itself when nothing changed.
func (s *Set) Bytes(b []byte) []byte {
	if s.n.Load() == 0 || len(b) == 0 {
		return b
	}
	r := s.rep.Load()
	i := firstMatch(r, b)
	if i < 0 {
		return b
	}
	out := r.rep.Replace(string(b[i:]))
	if len(out) == len(b)-i && out == string(b[i:]) {
		return b
	}
	return append(b[:i:i], out...)
}

// replacer is the set's scrubbing state: the replacer over every form, and
// an index of where forms start, so that a text holding no secret (the
// common case) is scanned once and returned without a copy.
type replacer struct {
	rep    *strings.Replacer
	starts bigrams
	// heads maps the first headLen bytes of each form to the forms; short
	// holds the forms shorter than headLen by their first MinLen bytes.
	heads, short map[string][]string
}

// headLen is how many leading bytes index a form: longer than MinLen so
// that ordinary words ("secrets") rarely reach the exact comparison.
const headLen = 10

func newReplacer(pairs, keys []string) *replacer {
	r := &replacer{rep: strings.NewReplacer(pairs...), heads: make(map[string][]string, len(keys)), short: map[string][]string{}}
	for _, k := range keys {
		r.starts.set(k)
		if len(k) >= headLen {
			r.heads[k[:headLen]] = append(r.heads[k[:headLen]], k)
		} else {
			r.short[k[:MinLen]] = append(r.short[k[:MinLen]], k)
		}
	}
	return r
}

func (r *replacer) replace(text string) string {
	i := firstMatch(r, text)
	if i < 0 {
		return text
	}
	return text[:i] + r.rep.Replace(text[i:])
}

// firstMatch is the offset of the first form in text, or -1. Bit sets
// of byte pairs reject most positions; the rest are checked exactly.
func firstMatch[T string | []byte](r *replacer, text T) int {
	for i := 0; i+MinLen <= len(text); i++ {
		h := uint32(text[i])<<8 | uint32(text[i+1])
		if r.starts[0][h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		h = uint32(text[i+2])<<8 | uint32(text[i+3])
		if r.starts[1][h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		h = uint32(text[i+4])<<8 | uint32(text[i+5])
		if r.starts[2][h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		if len(text)-i >= headLen {
			for _, f := range r.heads[string(text[i:i+headLen])] {
				if len(text)-i >= len(f) && string(text[i:i+len(f)]) == f {
					return i
				}
			}
		}
		if len(r.short) == 0 {
			continue
		}
		for _, f := range r.short[string(text[i:i+MinLen])] {
			if len(text)-i >= len(f) && string(text[i:i+len(f)]) == f {
				return i
			}
		}
	}
	return -1
}

// bigrams are bit sets of the byte pairs at offsets 0, 2 and 4 of every
// form (all forms are at least MinLen long): a position where one of the
// three pairs has no bit starts no form. Indexing by the pair itself keeps
// the test to three loads.
type bigrams [3][1 << 10]uint64

func (t *bigrams) set(form string) {
	for j := range t {
		h := uint32(form[2*j])<<8 | uint32(form[2*j+1])
		t[j][h>>6] |= 1 << (h & 63)
	}
}

// Error wraps err so that its text is scrubbed; errors.Is/As still see the
// original chain. A nil err stays nil.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	return &scrubbed{err: err, set: s}
}

type scrubbed struct {
	err error
	set *Set
}

func (e *scrubbed) Error() string { return e.set.String(e.err.Error()) }
func (e *scrubbed) Unwrap() error { return e.err }

// forms are the encodings in which value can leave the runtime: raw, URL
// query and path escaped, JSON-string escaped (every way an encoder escapes:
// Go's HTML-safe \u003c \u003e \u0026, unescaped as with SetEscapeHTML(false),
// Gson's \u003d \u0027, ASCII-only \uXXXX, "/" as "\/"), that JSON form
// escaped again for JSON inside JSON (up to three levels), HTML-escaped
// (text and html/template attributes), and base64.
func forms(value string) []string {
	out := []string{value, url.QueryEscape(value), url.PathEscape(value)}
	level := jsonForms(value)
	out = append(out, level...)
	// JSON inside JSON: each further level escapes the previous one's
	// backslashes and quotes (a JSON text carried in a JSON string, then in
	// an MCP result), by an encoder that may or may not escape HTML.
	for range 2 {
		var next []string
		for _, f := range level {
			for _, html := range []bool{true, false} {
				if g := jsonQuote(f, html); g != f && !slices.Contains(next, g) {
					next = append(next, g)
				}
			}
		}
		out = append(out, next...)
		level = next
	}
	// HTML pages (the console): html.EscapeString's and html/template's
	// escaping of text and quoted attributes, of the value and of its JSON
	// forms (a JSON value in an attribute).
	for _, f := range append(jsonForms(value), value) {
		out = append(out, htmlEscaper.Replace(f), htmlAttrEscaper.Replace(f))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for _, b := range base64Forms(enc, []byte(value)) {
			out = append(out, b)
			// A base64 text in JSON written by an encoder that escapes "/".
			if strings.Contains(b, "/") {
				out = append(out, strings.ReplaceAll(b, "/", `\/`))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var (
	htmlEscaper     = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	htmlAttrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;", "\x00", "\uFFFD")
)

// jsonForms is value as the inside of a JSON string, in every escaping in
// use: Go's default (HTML-safe), unescaped HTML characters, Gson's, ASCII
// only, each also with "/" written "\/" (PHP, some Java encoders).
func jsonForms(value string) []string {
	out := []string{jsonQuote(value, true), jsonQuote(value, false), gsonQuote(value), asciiQuote(value)}
	for _, f := range out[:4] {
		if strings.Contains(f, "/") {
			out = append(out, strings.ReplaceAll(f, "/", `\/`))
		}
	}
	return out
}

// jsonQuote is encoding/json's string form without the quotes.
func jsonQuote(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(v) != nil {
		return v
	}
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}

// gsonQuote escapes as Gson does by default: < > & = ' as \u00XX.
func gsonQuote(v string) string {
	return strings.NewReplacer("=", `\u003d`, "'", `\u0027`).Replace(jsonQuote(v, true))
}

// asciiQuote escapes every non-ASCII character as \uXXXX (UTF-16, lower
// case hex), as Python's json.dumps does by default.
func asciiQuote(v string) string {
	s := jsonQuote(v, false)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// base64Forms returns, for each of the three alignments the value can have
// inside a longer base64 text, the run of output characters that depends on
// the value's bytes alone. At alignment 0 that is the whole encoding minus a
// trailing partial group (whose last character mixes in the next byte); at
// alignments 1 and 2 the leading characters that mix in preceding bytes are
// dropped as well.
func base64Forms(enc *base64.Encoding, v []byte) []string {
	raw := enc.WithPadding(base64.NoPadding)
	out := []string{enc.EncodeToString(v)} // the value encoded alone, padded
	for lead := range 3 {
		buf := append(make([]byte, lead), v...)
		s := raw.EncodeToString(buf)
		// Characters fully determined by value bytes: skip ceil(lead*8/6) at
		// the start; at the end drop the last one if the bit count is not a
		// multiple of 6 (it is completed by whatever byte follows).
		skip := (lead*8 + 5) / 6
		end := len(s)
		if (len(buf)*8)%6 != 0 {
			end--
		}
		if end > skip {
			out = append(out, s[skip:end])
		}
	}
	return out
}
