package config

import (
	"encoding/json"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Spec is the kind-specific part of a provider entry: *MCP, *OpenAPI, *CLI
// or *Workers, one per entry of the kinds table.
type Spec interface {
	// Kind is the kind's name as written after kind:.
	Kind() string
}

// kindDef is one entry of the provider-kinds table: the keys the kind
// accepts under a provider entry, how they decode and validate, and which of
// them are paths or secrets. A kind lives in one file, kind_<name>.go; the
// binary's builders table (internal/app) has one line per kind, and a test
// there checks that every kind listed here can be built.
type kindDef struct {
	name string
	// keys are the kind's own keys, besides the common ones (providerKeys).
	keys []string
	// newSpec returns the kind's spec with its defaults.
	newSpec func() Spec
	// decode decodes one of keys (already known to belong to the kind).
	decode func(d *decoder, s Spec, key string, v *yaml.Node, kp string)
	// validate checks the spec of p (a provider entry at path pp).
	validate func(v *validator, p *Provider, pp string)
	// resolve makes the spec's relative paths absolute (c.Resolve).
	resolve func(s Spec, c *Config)
	// redact returns a copy of the spec safe to print (secrets as "***").
	redact func(s Spec) Spec
	// defaultCwd sets the working directory of a plugin's provider to the
	// plugin directory when the kind runs processes and none was given.
	defaultCwd func(s Spec, dir string)
}

// kinds is the table of provider kinds, in the order messages list them.
var kinds = []*kindDef{&mcpKind, &openapiKind, &cliKind, &workersKind}

func kindNamed(name string) *kindDef {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

func kindNames() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// allKindKeys is every kind-specific key of every kind.
func allKindKeys() []string {
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
	if k := kindNamed(p.Kind); k != nil && k.defaultCwd != nil && p.Spec != nil {
		k.defaultCwd(p.Spec, dir)
	}
}

// validateEnv and validateHeaders check names shared by several kinds.
func (v *validator) validateEnv(pp string, env map[string]string) {
	for k := range env {
		if !validVarName(k) {
			v.keyf(joinKey(pp+".env", k), "invalid environment variable name %q: use letters, digits and _, not starting with a digit", clip(k))
		}
	}
}

func (v *validator) validateHeaders(pp string, h map[string]string) {
	for k := range h {
		if !validHeaderName(k) {
			v.keyf(joinKey(pp+".headers", k), "invalid header name %q", clip(k))
		}
	}
}

// present reports whether a key was given (decoded, or given and bad).
func (v *validator) present(pp, key string, set bool) bool { return set || v.bad(pp+"."+key) }
