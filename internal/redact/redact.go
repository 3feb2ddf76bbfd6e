// Package redact is the runtime's one redactor: it knows every secret value
// the runtime holds (values interpolated from ${VAR} into secret-bearing
// config places, inbound tokens, login-flow tokens) and replaces each of them
// by its ${VAR} name wherever text leaves the runtime — tool results and
// error texts, log records, audit lines, doctor and list output, metrics
// labels and HTTP error bodies.
//
// Replacement is by exact value, never partial, and covers the encodings a
// value takes on its way out: URL query and path escaping, JSON string
// escaping and base64 (standard and URL alphabets, at any alignment inside a
// longer base64 text, as in an "Authorization: Basic" header). Values shorter
// than [MinLen] are not registered, so that ${LANG} or a port number does not
// turn output into noise.
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
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// MinLen is the shortest value that is redacted.
const MinLen = 6

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
	rep atomic.Pointer[strings.Replacer]
	n   atomic.Int64 // number of forms, 0 = nothing to do
}

// New returns an empty set.
func New() *Set { return &Set{names: map[string]string{}} }

// Add registers value as a secret shown as name. name is normally the
// variable's name ("KEY" or "${KEY}"; the ${} is added when missing); for a
// value built from several variables (URL userinfo) a text such as
// "${USER}:${PASS}". Values shorter than MinLen are ignored. Adding the same
// value twice keeps the first name.
func (s *Set) Add(name, value string) {
	if len(value) < MinLen {
		return
	}
	if !strings.HasPrefix(name, "${") {
		name = "${" + name + "}"
	}
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
	s.rep.Store(strings.NewReplacer(pairs...))
	s.n.Store(int64(len(keys)))
}

// Len is the number of registered forms (for tests and doctor).
func (s *Set) Len() int { return int(s.n.Load()) }

// String returns s with every known secret replaced by its name.
func (s *Set) String(text string) string {
	if s.n.Load() == 0 || text == "" {
		return text
	}
	return s.rep.Load().Replace(text)
}

// Bytes is String for byte slices; it returns b itself when nothing changed.
func (s *Set) Bytes(b []byte) []byte {
	if s.n.Load() == 0 || len(b) == 0 {
		return b
	}
	out := s.rep.Load().Replace(string(b))
	if len(out) == len(b) && out == string(b) {
		return b
	}
	return []byte(out)
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

// forms are the encodings in which value can leave the runtime.
func forms(value string) []string {
	out := []string{value, url.QueryEscape(value), url.PathEscape(value)}
	if b, err := json.Marshal(value); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, base64Forms(enc, []byte(value))...)
	}
	return out
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
