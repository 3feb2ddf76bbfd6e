package config

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The decoder walks a struct's fields by their yaml tags: a key is spelled
// once, in its tag, and the field's type says how its value decodes. A
// mapping accepts exactly the tagged keys, in field order (the order
// "unknown key" messages list them and suggestions prefer them).
//
// Decoding by type:
//
//	string              a string scalar; ${VAR} interpolated
//	*string             the same, nil when absent (so "" can mean something)
//	*bool               true/false, set whenever the key is given
//	bool, int           true/false, an integer (or ${VAR} that reads as one)
//	Duration            "30s", "1m30s" (0 alone may go without a unit)
//	[]string            a list of strings
//	map[string]string   a mapping of strings (any keys)
//	map[string][]string a mapping of lists of strings (any keys)
//	map[string]T        a mapping of T structs (any keys)
//	T, *T               a mapping of T's keys; *T is nil when absent
//	any                 a literal YAML value, as JSON types, no ${VAR}
//
// A field tagged default:"x" gets x when the decoder makes its struct (an
// item of a map, a *T), before the file's keys are decoded.
// Anything else a struct decodes itself, as a FieldDecoder.

// FieldDecoder is implemented by a struct that decodes some of its keys
// itself (a key whose value is not one of the shapes above, or one whose
// absence and emptiness differ). DecodeField reports whether it handled key;
// the others decode by type.
type FieldDecoder interface {
	DecodeField(d *Decoder, key string, n *yaml.Node, path string) bool
}

// fieldDecoder is FieldDecoder for the config's own structs.
type fieldDecoder interface {
	decodeField(d *Decoder, key string, n *yaml.Node, path string) bool
}

type field struct {
	key   string
	index int
	def   string
	hasDf bool
}

var fieldCache sync.Map // reflect.Type → []field

func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		def, hasDf := sf.Tag.Lookup("default")
		fs = append(fs, field{key: name, index: i, def: def, hasDf: hasDf})
	}
	fieldCache.Store(t, fs)
	return fs
}

// Keys lists the YAML keys of the struct v (or *v) in field order.
func Keys(v any) []string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return keysOf(fieldsOf(t))
}

func keysOf(fs []field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.key
	}
	return out
}

// Decode decodes the mapping n into the struct out points to, one key per
// tagged field. It reports false when n is null (absent) or not a mapping
// (then reported).
func (d *Decoder) Decode(n *yaml.Node, path string, out any) bool {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: Decode into %T, want a pointer to a struct", out))
	}
	return d.decodeStruct(n, path, rv.Elem())
}

func (d *Decoder) decodeStruct(n *yaml.Node, path string, rv reflect.Value) bool {
	fs := fieldsOf(rv.Type())
	return d.mapping(n, path, keysOf(fs), func(key string, _, v *yaml.Node, kp string) {
		d.decodeKey(rv, fs, key, v, kp)
	})
}

// decodeKey decodes one key of a struct: by the struct's own decoder if it
// has one for the key, else by the field's type.
func (d *Decoder) decodeKey(rv reflect.Value, fs []field, key string, v *yaml.Node, kp string) {
	switch x := rv.Addr().Interface().(type) {
	case FieldDecoder:
		if x.DecodeField(d, key, v, kp) {
			return
		}
	case fieldDecoder:
		if x.decodeField(d, key, v, kp) {
			return
		}
	}
	for _, f := range fs {
		if f.key == key {
			d.decodeField(rv.Field(f.index), v, kp)
			return
		}
	}
}

// withDefaults returns a new T with its default:"" tags applied.
func withDefaults(t reflect.Type) reflect.Value {
	nv := reflect.New(t).Elem()
	for _, f := range fieldsOf(t) {
		if f.hasDf {
			nv.Field(f.index).SetString(f.def)
		}
	}
	return nv
}

var (
	durationType   = reflect.TypeFor[Duration]()
	stringListType = reflect.TypeFor[[]string]()
	stringMapType  = reflect.TypeFor[map[string]string]()
)

func (d *Decoder) decodeField(fv reflect.Value, v *yaml.Node, kp string) {
	switch fv.Type() {
	case durationType:
		d.duration(v, kp, fv.Addr().Interface().(*Duration))
		return
	case stringListType:
		fv.Set(reflect.ValueOf(d.stringList(v, kp)))
		return
	case stringMapType:
		fv.Set(reflect.ValueOf(d.stringMap(v, kp)))
		return
	}
	t := fv.Type()
	switch t.Kind() {
	case reflect.String:
		if s, ok := d.str(v, kp, false); ok {
			fv.SetString(s)
		}
		return
	case reflect.Bool:
		d.boolean(v, kp, fv.Addr().Interface().(*bool))
		return
	case reflect.Int:
		d.integer(v, kp, fv.Addr().Interface().(*int))
		return
	case reflect.Interface:
		if x := d.anyValue(v, kp); x != nil {
			fv.Set(reflect.ValueOf(x))
		} else {
			fv.SetZero()
		}
		return
	case reflect.Struct:
		d.decodeStruct(v, kp, fv)
		return
	case reflect.Pointer:
		switch t.Elem().Kind() {
		case reflect.String:
			if s, ok := d.str(v, kp, false); ok {
				fv.Set(reflect.ValueOf(&s))
			}
			return
		case reflect.Bool:
			b := new(bool)
			d.boolean(v, kp, b)
			fv.Set(reflect.ValueOf(b))
			return
		case reflect.Struct:
			nv := withDefaults(t.Elem())
			if d.decodeStruct(v, kp, nv) {
				fv.Set(nv.Addr())
			} else {
				fv.SetZero()
			}
			return
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			break
		}
		m := reflect.MakeMap(t)
		fv.Set(m)
		switch et := t.Elem(); {
		case et == stringListType:
			d.mapping(v, kp, nil, func(key string, _, v *yaml.Node, ep string) {
				m.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(d.stringList(v, ep)))
			})
			return
		case et.Kind() == reflect.Struct:
			d.mapping(v, kp, nil, func(key string, _, v *yaml.Node, ep string) {
				e := withDefaults(et)
				d.decodeStruct(v, ep, e)
				m.SetMapIndex(reflect.ValueOf(key), e)
			})
			return
		}
	}
	panic(fmt.Sprintf("config: no decoder for a field of type %s at %s", t, kp))
}

// Mapping walks a mapping value whose keys are keys (any key when nil),
// calling fn with each accepted key, its value and its path. It reports
// false when n is null (absent) or not a mapping (then reported).
func (d *Decoder) Mapping(n *yaml.Node, path string, keys []string, fn func(key string, v *yaml.Node, path string)) bool {
	return d.mapping(n, path, keys, func(key string, _, v *yaml.Node, kp string) { fn(key, v, kp) })
}

// Sequence walks a list, calling fn with each item (nil when it could not
// be resolved) and its path.
func (d *Decoder) Sequence(n *yaml.Node, path string, fn func(i int, item *yaml.Node, path string)) {
	d.sequence(n, path, fn)
}

// StringList decodes a list of strings (nil when absent).
func (d *Decoder) StringList(n *yaml.Node, path string) []string { return d.stringList(n, path) }

// ErrAt reports a problem with the value at path and marks it bad, so that
// validation skips it.
func (d *Decoder) ErrAt(n *yaml.Node, path, format string, args ...any) {
	d.errAt(n, path, format, args...)
}

// Bad reports whether the value at path failed to decode.
func (d *Decoder) Bad(path string) bool { return d.meta.bad[path] }

// MarkBad marks the value at path as reported, so that validation skips it.
func (d *Decoder) MarkBad(path string) { d.meta.bad[path] = true }

// Given reports whether the file wrote the key at path.
func (d *Decoder) Given(path string) bool {
	_, ok := d.meta.key[path]
	return ok
}

// ErrCount is the number of problems reported so far.
func (d *Decoder) ErrCount() int { return len(d.errs) }

// anyValue decodes a literal YAML value (a parameter's default) into JSON
// types. Strings may not reference the environment: a default is shown to
// the model in the tool's schema.
func (d *Decoder) anyValue(n *yaml.Node, path string) any {
	if n = d.resolve(n, path); n == nil || isNull(n) {
		return nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			ip := index(path, i)
			if e = d.resolve(e, ip); e == nil {
				return nil
			}
			d.meta.val[ip] = pos(e)
			out = append(out, d.anyValue(e, ip))
			if d.meta.bad[ip] {
				d.meta.bad[path] = true
			}
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		d.mapping(n, path, nil, func(key string, _, v *yaml.Node, kp string) {
			out[key] = d.anyValue(v, kp)
			if d.meta.bad[kp] {
				d.meta.bad[path] = true
			}
		})
		return out
	case yaml.ScalarNode:
	default:
		d.errAt(n, path, "want a value, got %s", describe(n))
		return nil
	}
	switch n.Tag {
	case "!!str":
		s, ok := d.str(n, path, false)
		if vars := d.meta.vars[path]; len(vars) > 0 {
			d.errAt(n, path, "a default is shown to the model in the tool's schema, so it cannot come from the environment (%s)", strings.TrimPrefix(from(vars), "the value of "))
			return nil
		}
		if !ok {
			return nil
		}
		return s
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i
		}
		d.errAt(n, path, "integer %s out of range", clip(n.Value))
		return nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
		d.errAt(n, path, "%s is not a number JSON can hold", clip(n.Value))
		return nil
	}
	d.errAt(n, path, "unsupported value %s", clip(n.Value))
	return nil
}

var (
	_ fieldDecoder = (*Config)(nil)
	_ fieldDecoder = (*Provider)(nil)
	_ fieldDecoder = (*Local)(nil)
	_ fieldDecoder = (*HTTP)(nil)
	_ fieldDecoder = (*GC)(nil)
	_ fieldDecoder = (*Policy)(nil)
	_ fieldDecoder = (*Rule)(nil)
	_ fieldDecoder = (*Security)(nil)
	_ fieldDecoder = (*Override)(nil)
)
