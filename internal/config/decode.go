package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/text"
)

// meta remembers where each value came from, for Validate's positions and
// to keep interpolated (possibly secret) values out of messages.
type meta struct {
	file string
	val  map[string]Pos      // key path → position of its value
	key  map[string]Pos      // key path → position of its key
	vars map[string][]string // key path → variables its value was built from
	bad  map[string]bool     // list items that failed to decode (skipped by Validate)
	// secrets are interpolated values from secret-bearing places (secrets.go).
	secrets []Secret
	// refs are the secret-store references, in file order (secretrefs.go).
	refs []RefUse
}

func newMeta(file string) *meta {
	return &meta{file: file, val: map[string]Pos{}, key: map[string]Pos{}, vars: map[string][]string{}, bad: map[string]bool{}}
}

// Decoder walks the YAML of one config file into a Config: it keeps the
// positions of keys and values, interpolates ${VAR}, and collects every
// problem with its line and column. A kind's spec decodes through it by
// its yaml tags (structs.go); FieldDecoder methods get it for the rest.
type Decoder struct {
	file   string
	env    func(string) (string, bool)
	meta   *meta
	errs   []Error
	budget int // node visits left; guards against alias blow-up
	// While decoding a provider: missing-variable errors are held here and
	// dropped if the provider turns out to be disabled.
	soft    *[]Error
	missing *[]string
}

const visitBudget = 200000

// errAt reports a problem with the value at path, which Validate then
// skips (no cascade of "missing" errors for a value already reported).
func (d *Decoder) errAt(n *yaml.Node, path, format string, args ...any) {
	d.meta.bad[path] = true
	d.report(n, path, format, args...)
}

// report records an error without marking path bad (for key-level problems
// reported against the enclosing mapping).
func (d *Decoder) report(n *yaml.Node, path, format string, args ...any) {
	line, col := 1, 0
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	d.errs = append(d.errs, Error{File: d.file, Line: line, Col: col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func pos(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

// resolve follows aliases and charges the visit budget. It returns nil when
// the budget is exhausted (an error has then been recorded once).
func (d *Decoder) resolve(n *yaml.Node, path string) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			d.errAt(n, path, "alias chain too long")
			return nil
		}
		n = n.Alias
	}
	if n == nil {
		return nil
	}
	d.budget--
	if d.budget == 0 {
		d.errAt(n, path, "document too complex (too many alias expansions)")
	}
	if d.budget <= 0 {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// describe names what a node holds, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "boolean " + n.Value
		case "!!int", "!!float":
			return "number " + n.Value
		}
		return "a string"
	}
	return "a YAML node"
}

// joinKey appends a mapping key to a path, bracketing keys that are not
// plain identifiers.
func joinKey(path, key string) string {
	plain := key != ""
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			plain = false
			break
		}
	}
	if !plain {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

type pair struct {
	k, v   *yaml.Node
	merged bool
}

// pairs lists a mapping's entries, expanding YAML merge keys (<<); explicit
// keys win over merged ones. Duplicate explicit keys are reported.
func (d *Decoder) pairs(n *yaml.Node, path string, stack []*yaml.Node) []pair {
	for _, s := range stack {
		if s == n {
			d.report(n, path, "merge key (<<) refers to a mapping that contains it")
			return nil
		}
	}
	if len(stack) > 16 {
		d.report(n, path, "merge keys (<<) nested too deeply")
		return nil
	}
	stack = append(stack, n)
	var out []pair
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind == yaml.ScalarNode {
			if first, dup := seen[k.Value]; dup {
				d.report(k, path, "duplicate key %q (first at line %d)", clip(k.Value), first.Line)
				continue
			}
			seen[k.Value] = k
		}
		out = append(out, pair{k: k, v: v})
	}
	for _, m := range merges {
		m = d.resolve(m, path)
		if m == nil {
			continue
		}
		var srcs []*yaml.Node
		switch m.Kind {
		case yaml.MappingNode:
			srcs = []*yaml.Node{m}
		case yaml.SequenceNode:
			for _, e := range m.Content {
				if e = d.resolve(e, path); e == nil {
					continue
				}
				if e.Kind != yaml.MappingNode {
					d.report(e, path, "merge key (<<) wants mappings, got %s", describe(e))
					continue
				}
				srcs = append(srcs, e)
			}
		default:
			d.report(m, path, "merge key (<<) wants a mapping or a list of mappings, got %s", describe(m))
		}
		for _, src := range srcs {
			for _, p := range d.pairs(src, path, stack) {
				if p.k.Kind == yaml.ScalarNode {
					if _, dup := seen[p.k.Value]; dup {
						continue
					}
					seen[p.k.Value] = p.k
				}
				p.merged = true
				out = append(out, p)
			}
		}
	}
	return out
}

// mapping walks a mapping value. With keys non-nil only those keys are
// accepted (unknown ones are reported with a suggestion); with keys nil any
// string key is. fn gets each accepted key with its resolved value and path.
// It reports false when n is null (treated as absent) or not a mapping.
func (d *Decoder) mapping(n *yaml.Node, path string, keys []string, fn func(key string, k, v *yaml.Node, path string)) bool {
	n = d.resolve(n, path)
	if n == nil || isNull(n) {
		return false
	}
	if n.Kind != yaml.MappingNode {
		d.errAt(n, path, "want a mapping, got %s", describe(n))
		return false
	}
	for _, p := range d.pairs(n, path, nil) {
		k := d.resolve(p.k, path)
		if k == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" || k.Tag == "!!bool" {
			d.report(k, path, "keys must be strings, got %s", describe(k))
			continue
		}
		key := k.Value
		if keys != nil && !slices.Contains(keys, key) {
			msg := fmt.Sprintf("unknown key %q", clip(key))
			if s := text.Suggest(key, keys); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else if len(keys) <= 8 {
				msg += " (want " + orList(keys) + ")"
			}
			d.report(k, path, "%s", msg)
			continue
		}
		kp := joinKey(path, key)
		v := d.resolve(p.v, kp)
		if v == nil {
			continue
		}
		d.meta.key[kp] = pos(k)
		d.meta.val[kp] = pos(v)
		fn(key, k, v, kp)
	}
	return true
}

// scalar checks that n is a string-like scalar and interpolates it.
// ok is false when n is null (absent) or on error. nullErr makes null an error.
func (d *Decoder) str(n *yaml.Node, path string, nullErr bool) (string, bool) {
	if n = d.resolve(n, path); n == nil {
		return "", false
	}
	d.meta.val[path] = pos(n)
	if isNull(n) {
		if nullErr {
			d.errAt(n, path, `want a string, got null (write "" for an empty string)`)
		}
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		d.errAt(n, path, "want a string, got %s", describe(n))
		return "", false
	}
	switch n.Tag {
	case "!!str":
	case "!!int", "!!float", "!!timestamp":
		return n.Value, true // the literal text
	case "!!bool":
		d.errAt(n, path, "want a string, got boolean %s (quote it if you mean the text: \"%s\")", n.Value, n.Value)
		return "", false
	default:
		d.errAt(n, path, "unsupported YAML tag %s", clip(n.Tag))
		return "", false
	}
	return d.interp(n, path)
}

// interp expands ${VAR} references in a string scalar.
func (d *Decoder) interp(n *yaml.Node, path string) (string, bool) {
	res, err := interpolate(n.Value, d.env)
	if err != nil {
		d.errAt(n, path, "%v", err)
		return "", false
	}
	for _, r := range res.refs {
		d.meta.refs = append(d.meta.refs, RefUse{Path: path, Pos: pos(n), Ref: r})
	}
	if len(res.vars)+len(res.refs) > 0 {
		// a reference's name is shown instead of the value, as a variable's is
		d.meta.vars[path] = append(append([]string(nil), res.vars...), refNames(res.refs)...)
	}
	if len(res.vars) > 0 {
		d.noteSecrets(path, res)
	} else if strings.Contains(res.value, "://") {
		d.literalURL(res)
	}
	if len(res.missing) > 0 {
		d.meta.bad[path] = true
	}
	for _, name := range res.missing {
		e := Error{File: d.file, Line: n.Line, Col: n.Column, Path: path, Msg: fmt.Sprintf("environment variable %s is not set", name)}
		if d.soft != nil {
			*d.soft = append(*d.soft, e)
			if !slices.Contains(*d.missing, name) {
				*d.missing = append(*d.missing, name)
			}
		} else {
			d.errs = append(d.errs, e)
		}
	}
	return res.value, len(res.missing) == 0 || d.soft != nil
}

// from names the origin of an interpolated value without printing it.
func from(vars []string) string {
	refs := make([]string, len(vars))
	for i, v := range vars {
		refs[i] = "${" + v + "}"
	}
	return "the value of " + strings.Join(refs, ", ")
}

func (d *Decoder) boolean(n *yaml.Node, path string, out *bool) {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			*out = b
			return
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "$") {
		v, ok := d.interp(n, path)
		if !ok || d.meta.bad[path] {
			return
		}
		switch v {
		case "true":
			*out = true
		case "false":
			*out = false
		default:
			d.errAt(n, path, "want true or false, got %s", from(d.meta.vars[path]))
		}
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		d.errAt(n, path, "want true or false, got %q", clip(n.Value))
		return
	}
	d.errAt(n, path, "want true or false, got %s", describe(n))
}

func (d *Decoder) integer(n *yaml.Node, path string, out *int) {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var v int
		if err := n.Decode(&v); err != nil {
			d.errAt(n, path, "integer %s out of range", clip(n.Value))
			return
		}
		*out = v
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "$") {
		s, ok := d.interp(n, path)
		if !ok || d.meta.bad[path] {
			return
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			d.errAt(n, path, "want an integer, got %s", from(d.meta.vars[path]))
			return
		}
		*out = v
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		d.errAt(n, path, "want an integer, got %q", clip(n.Value))
		return
	}
	d.errAt(n, path, "want an integer, got %s", describe(n))
}

func (d *Decoder) duration(n *yaml.Node, path string, out *Duration) {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return
	}
	const want = `want a duration such as "30s" or "1m30s"`
	if n.Kind != yaml.ScalarNode {
		d.errAt(n, path, "%s, got %s", want, describe(n))
		return
	}
	switch n.Tag {
	case "!!str":
		s, ok := d.interp(n, path)
		if !ok || d.meta.bad[path] {
			return
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			if vars := d.meta.vars[path]; len(vars) > 0 {
				d.errAt(n, path, "%s, got %s", want, from(vars))
			} else {
				d.errAt(n, path, "%s, got %q", want, clip(s))
			}
			return
		}
		out.Duration = v
	case "!!int", "!!float":
		if n.Value == "0" {
			out.Duration = 0
			return
		}
		d.errAt(n, path, "%s, got number %s (add a unit: %ss)", want, clip(n.Value), clip(n.Value))
	default:
		d.errAt(n, path, "%s, got %s", want, describe(n))
	}
}

func (d *Decoder) stringList(n *yaml.Node, path string) []string {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, path, "want a list, got %s", describe(n))
		d.meta.bad[path] = true
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, e := range n.Content {
		ip := index(path, i)
		if e = d.resolve(e, ip); e == nil {
			continue
		}
		d.meta.val[ip] = pos(e)
		if s, ok := d.str(e, ip, true); ok {
			out = append(out, s)
		} else {
			d.meta.bad[ip] = true
			out = append(out, "") // keep indexes aligned with the file
		}
	}
	return out
}

func (d *Decoder) stringMap(n *yaml.Node, path string) map[string]string {
	out := map[string]string{}
	if !d.mapping(n, path, nil, func(key string, _, v *yaml.Node, kp string) {
		if s, ok := d.str(v, kp, true); ok {
			out[key] = s
		}
	}) {
		return nil
	}
	return out
}

// sequence walks a list, calling fn with each resolved item and its path.
func (d *Decoder) sequence(n *yaml.Node, path string, fn func(i int, item *yaml.Node, path string)) {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, path, "want a list, got %s", describe(n))
		return
	}
	for i, e := range n.Content {
		ip := index(path, i)
		e = d.resolve(e, ip)
		if e == nil {
			d.meta.bad[ip] = true
			fn(i, nil, ip)
			continue
		}
		d.meta.val[ip] = pos(e)
		fn(i, e, ip)
	}
}

// decode turns YAML into a Config with defaults applied. It checks syntax,
// keys and types; semantic rules are Validate's. A nil Config means the
// document could not be walked at all.
func decode(file string, data []byte, env func(string) (string, bool)) (*Config, []Error) {
	d := &Decoder{file: file, env: env, meta: newMeta(file), budget: visitBudget}
	c := defaults()
	c.meta = d.meta

	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // empty file: zero-config
		}
		return nil, []Error{yamlError(file, data, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, []Error{yamlError(file, data, err)}
		}
		n := &extra
		if len(extra.Content) > 0 {
			n = extra.Content[0]
		}
		d.errAt(n, "", "a second YAML document (---) is not allowed; put everything in one")
		return nil, d.errs
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return c, nil
	}
	root := d.resolve(doc.Content[0], "")
	if root == nil || isNull(root) {
		return c, nil
	}
	if root.Kind != yaml.MappingNode {
		d.errAt(root, "", "the top level must be a mapping of settings (%s), got %s", strings.Join(Keys(Config{}), ", "), describe(root))
		return nil, d.errs
	}
	d.decodeStruct(root, "", reflect.ValueOf(c).Elem())
	return c, d.errs
}

// The keys of the config's own structs that do not decode by type alone.

func (c *Config) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	switch key {
	case "naming":
		d.namingKey(v, p, c) // naming.go
	case "flat":
		d.flatKey(v, p, c) // naming.go
	case "index":
		d.index(v, p, &c.Index) // index.go
	case "profiles":
		d.profiles(v, p, c) // profiles.go
	case "quotas":
		d.quotas(v, p, c) // quotas.go
	case "cache":
		d.cacheKey(v, p, c) // cache.go
	case "providers":
		c.Providers = nil
		d.sequence(v, p, func(i int, item *yaml.Node, ip string) {
			c.Providers = append(c.Providers, d.provider(item, ip))
		})
	default:
		return false
	}
	return true
}

func (h *HTTP) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "tokens" {
		return false
	}
	h.Tokens, h.TokenNames, h.TokenUses = d.tokens(v, p) // tokens.go
	return true
}

func (l *Local) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "rename" {
		return false
	}
	l.Rename = d.renameKey(v, p) // naming.go
	return true
}

func (p *Provider) decodeField(d *Decoder, key string, v *yaml.Node, kp string) bool {
	switch key {
	case "rename":
		p.Rename = d.renameKey(v, kp) // naming.go
	case "overrides":
		d.overridesKey(v, kp, p) // overrides.go
	case "pin":
		d.pinKey(v, kp, &p.Pin) // registry.go
	default:
		return false
	}
	return true
}

func (d *Decoder) provider(item *yaml.Node, path string) Provider {
	p := Provider{Enabled: true, RequireConfirm: true}
	if item == nil {
		return p
	}
	p.Pos = pos(item)
	if isNull(item) || item.Kind != yaml.MappingNode {
		d.meta.bad[path] = true
		if isNull(item) {
			d.errAt(item, path, "empty provider entry")
		} else {
			d.errAt(item, path, "want a mapping with id and kind, got %s", describe(item))
		}
		return p
	}
	var soft []Error
	d.soft, d.missing = &soft, &p.Unresolved
	// Kind-specific keys wait until the whole entry (merge keys included)
	// has said which kind it is.
	type later struct {
		key   string
		k, v  *yaml.Node
		kpath string
	}
	var specific []later
	var raw []rawPair // for a registry entry's digest (registrymark.go)
	pv := reflect.ValueOf(&p).Elem()
	common := fieldsOf(pv.Type())
	d.mapping(item, path, slices.Concat(keysOf(common), allKindKeys()), func(key string, k, v *yaml.Node, kp string) {
		raw = append(raw, rawPair{key, v})
		if slices.ContainsFunc(common, func(f field) bool { return f.key == key }) {
			d.decodeKey(pv, common, key, v, kp)
		} else {
			specific = append(specific, later{key, k, v, kp})
		}
	})
	if kd := kindNamed(p.Kind); kd != nil {
		p.Spec = kd.NewSpec()
		for _, l := range specific {
			if slices.Contains(kd.keys, l.key) {
				kd.decodeSpec(d, p.Spec, l.key, l.v, l.kpath)
			} else {
				d.report(l.k, l.kpath, "%q does not apply to kind %s", l.key, kd.Name)
			}
		}
	} // a missing or unknown kind is Validate's to report
	d.soft, d.missing = nil, nil
	if m := ParseRegistryMarker(item.HeadComment); m != nil {
		m.Digest = entryDigest(raw)
		p.Registry = m
	}
	if p.Enabled {
		d.errs = append(d.errs, soft...)
		p.Unresolved = nil
	}
	return p
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)
var yamlAnchorRE = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// yamlError turns a yaml library error into a positioned Error.
func yamlError(file string, data []byte, err error) Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := Error{File: file, Line: 1, Msg: "invalid YAML: " + msg}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			e.Line = n
		}
		e.Msg = "invalid YAML: " + m[2]
		return e
	}
	at := -1
	switch {
	case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "UTF-16"):
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				at = i
				break
			}
			i += size
		}
	case strings.Contains(msg, "control characters"):
		for i, r := range string(data) {
			if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffe || r == 0xffff {
				at = i
				break
			}
		}
	default:
		if m := yamlAnchorRE.FindStringSubmatch(msg); m != nil {
			at = bytes.Index(data, []byte("*"+m[1]))
		}
	}
	if at >= 0 {
		e.Line = 1 + bytes.Count(data[:at], []byte("\n"))
		e.Col = 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:at], '\n')+1:at])
	}
	return e
}

// orList formats "a, b or c".
func orList(list []string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

func sortErrors(list []Error) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Line != list[j].Line {
			return list[i].Line < list[j].Line
		}
		return list[i].Col < list[j].Col
	})
}

func dedupErrors(list []Error) []Error {
	var out []Error
	for _, e := range list {
		if len(out) > 0 && e == out[len(out)-1] {
			continue
		}
		out = append(out, e)
	}
	return out
}
