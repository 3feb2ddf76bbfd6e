package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Spec is the kind-specific part of a provider entry, one type per kind
// (the kind's package defines it).
type Spec interface {
	// Kind is the kind's name as written after kind:.
	Kind() string
}

// Kind is the config half of a provider kind: how the keys of its entries
// decode, validate, resolve and print. A kind's package defines one value
// (with its builder, see internal/provider.Kind) and the list of kinds
// (internal/provider/kinds) registers it; config decodes through the
// registered kinds.
type Kind struct {
	// Name is the kind as written after kind:.
	Name string
	// NewSpec returns the kind's spec with its defaults: a pointer to a
	// struct whose yaml tags are the kind's keys, besides the common ones
	// (structs.go says how each field type decodes).
	NewSpec func() Spec
	// Validate checks the spec of p, a provider entry at path.
	Validate func(v *Validator, p *Provider, path string)
	// Resolve makes the spec's relative paths absolute (c.Resolve); optional.
	Resolve func(s Spec, c *Config)
	// Redact returns a copy of the spec safe to print (secrets as "***");
	// optional when the spec holds no secret.
	Redact func(s Spec) Spec
	// DefaultCwd sets the working directory of a plugin's provider to the
	// plugin directory when the kind runs processes and none was given;
	// optional.
	DefaultCwd func(s Spec, dir string)
	// Section, for the runtime's own kinds (builtin, local), is the config
	// section that holds the kind's one entry (HostEntries): such a kind is
	// never written under providers:, and its keys are the section's.
	Section string
}

type kindDef struct {
	Kind
	keys   []string
	fields []field
}

var (
	kindsMu sync.RWMutex
	kinds   []*kindDef // in the order registered: the order messages list them
)

// RegisterKind adds a kind to those the config accepts. It panics on a
// second kind of the same name or a spec that is not a tagged struct: both
// are programming errors found by the first test that loads a config.
func RegisterKind(k Kind) {
	if k.Name == "" || k.NewSpec == nil || k.Validate == nil && k.Section == "" {
		panic("config: RegisterKind needs Name, NewSpec and Validate")
	}
	spec := k.NewSpec()
	if spec.Kind() != k.Name {
		panic(fmt.Sprintf("config: kind %q has a spec of kind %q", k.Name, spec.Kind()))
	}
	t := reflect.TypeOf(spec)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: kind %q: spec %T is not a pointer to a struct", k.Name, spec))
	}
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if slices.ContainsFunc(kinds, func(d *kindDef) bool { return d.Name == k.Name }) {
		panic(fmt.Sprintf("config: kind %q registered twice", k.Name))
	}
	if k.Section != "" { // its keys are its section's, decoded with the config
		kinds = append(kinds, &kindDef{Kind: k})
		return
	}
	fs := fieldsOf(t.Elem())
	kinds = append(kinds, &kindDef{Kind: k, keys: keysOf(fs), fields: fs})
}

// kindNamed is the kind that providers: entries may name.
func kindNamed(name string) *kindDef {
	if k := anyKindNamed(name); k != nil && k.Section == "" {
		return k
	}
	return nil
}

func anyKindNamed(name string) *kindDef {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	for _, k := range kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// KindNames lists the kinds providers: entries may name, in the order
// messages list them.
func KindNames() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		if k.Section == "" {
			out = append(out, k.Name)
		}
	}
	return out
}

// allKindKeys is every kind-specific key of every kind.
func allKindKeys() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	var out []string
	for _, k := range kinds {
		for _, key := range k.keys {
			if !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
	}
	return out
}

// decodeSpec decodes one of the kind's keys into s.
func (k *kindDef) decodeSpec(d *Decoder, s Spec, key string, v *yaml.Node, kp string) {
	d.decodeKey(reflect.ValueOf(s).Elem(), k.fields, key, v, kp)
}

// MarshalJSON writes the common keys and the kind's keys side by side, the
// shape the YAML has.
func (p Provider) MarshalJSON() ([]byte, error) {
	type common Provider
	base, err := json.Marshal(common(p))
	if err != nil || p.Spec == nil {
		return base, err
	}
	spec, err := json.Marshal(p.Spec)
	if err != nil {
		return nil, err
	}
	if string(spec) == "{}" {
		return base, nil
	}
	out := append(base[:len(base)-1:len(base)-1], ',')
	return append(out, spec[1:]...), nil
}

// SetDefaultCwd makes dir the working directory of a provider that runs
// processes and names none (a plugin's relative paths mean its own files).
func (p *Provider) SetDefaultCwd(dir string) {
	if k := kindNamed(p.Kind); k != nil && k.DefaultCwd != nil && p.Spec != nil {
		k.DefaultCwd(p.Spec, dir)
	}
}

// The validator's checks a kind's Validate uses.

// Errf reports a problem at the value of path; Keyf at its key.
func (v *Validator) Errf(path, format string, args ...any) { v.errf(path, format, args...) }
func (v *Validator) Keyf(path, format string, args ...any) { v.keyf(path, format, args...) }

// Show quotes a value for a message, unless it came from the environment
// (then it names the variables instead).
func (v *Validator) Show(path, value string) string { return v.show(path, value) }

// Bad reports whether the value at path was reported already (by the
// decoder): checks on it are skipped.
func (v *Validator) Bad(path string) bool { return v.bad(path) }

// Present reports whether a key was given (decoded, or given and bad).
func (v *Validator) Present(path, key string, set bool) bool { return v.present(path, key, set) }

// FromEnv reports whether the value at path was interpolated from ${VAR}.
func (v *Validator) FromEnv(path string) bool { return v.c.meta != nil && len(v.c.meta.vars[path]) > 0 }

// FirstAt says where path is, as " (first at line N)", for duplicates.
func (v *Validator) FirstAt(path string) string { return v.line(path) }

// Dir is the config's directory ("" for a config built in code).
func (v *Validator) Dir() string { return v.c.Dir }

// URL checks an http(s) URL with a host.
func (v *Validator) URL(path, raw string) { v.url(path, raw) }

// Duration checks that a duration is not negative.
func (v *Validator) Duration(path string, d Duration) { v.duration(path, d) }

// Env checks environment variable names; Headers checks header names.
func (v *Validator) Env(path string, env map[string]string)   { v.validateEnv(path, env) }
func (v *Validator) Headers(path string, h map[string]string) { v.validateHeaders(path, h) }

// validateEnv and validateHeaders check names shared by several kinds.
func (v *Validator) validateEnv(pp string, env map[string]string) {
	for k := range env {
		if !validVarName(k) {
			v.keyf(joinKey(pp+".env", k), "invalid environment variable name %q: use letters, digits and _, not starting with a digit", clip(k))
		}
	}
}

func (v *Validator) validateHeaders(pp string, h map[string]string) {
	for k := range h {
		if !ValidHeaderName(k) {
			v.keyf(joinKey(pp+".headers", k), "invalid header name %q", clip(k))
		}
	}
}

// present reports whether a key was given (decoded, or given and bad).
func (v *Validator) present(pp, key string, set bool) bool { return set || v.bad(pp+"."+key) }

// Helpers for kinds' messages and paths.

// KeyPath appends a mapping key to a key path, bracketing keys that are not
// plain identifiers (providers[0].env["A B"]).
func KeyPath(path, key string) string { return joinKey(path, key) }

// ItemPath appends a list index to a key path (providers[0].tools[2]).
func ItemPath(path string, i int) string { return index(path, i) }

// OrList formats "a, b or c".
func OrList(list []string) string { return orList(list) }

// Describe names what a node holds, for "want X, got Y" messages.
func Describe(n *yaml.Node) string { return describe(n) }

// RedactMap returns m with every value replaced by "***".
func RedactMap(m map[string]string) map[string]string { return redactMap(m) }
