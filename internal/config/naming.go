package config

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/naming"
)

// Naming settings: which scheme builds canonical names, how long
// a name flat mode publishes may be, and a provider's operator renames.
//
//	naming: readable            # readable | lossless
//	flat: {maxNameLength: 64}
//	providers:
//	  - id: hub
//	    rename: {"Very_Long_Server_Name__get_thing": get_thing}
//	local:
//	  rename: {deploy-to-production-cluster: deploy_prod}

// Defaults of the naming settings.
const (
	DefaultNaming            = string(naming.Readable)
	DefaultFlatMaxNameLength = naming.MaxLen
	// MaxFlatNameLength bounds flat.maxNameLength (no client accepts more).
	MaxFlatNameLength = 1024
)

// NamingSchemes are the accepted values of `naming:`.
var NamingSchemes = naming.Schemes

// Flat configures flat mode.
type Flat struct {
	// MaxNameLength is the longest tool name flat mode publishes; longer
	// ones stay reachable everywhere else (0: DefaultFlatMaxNameLength).
	MaxNameLength int `json:"maxNameLength" yaml:"maxNameLength"`
}

// Scheme is the naming scheme in force.
func (c *Config) Scheme() naming.Scheme {
	s, err := naming.ParseScheme(c.Naming)
	if err != nil {
		return naming.Readable // Load rejects it; configs built in code get the default
	}
	return s
}

// FlatMaxNameLength is flat.maxNameLength with its default applied.
func (c *Config) FlatMaxNameLength() int {
	if c.Flat.MaxNameLength > 0 {
		return c.Flat.MaxNameLength
	}
	return DefaultFlatMaxNameLength
}

// Renames gathers every enabled provider's rename (the local scripts'
// under "local"): provider id → the tool's own name → the name to use
// instead.
func (c *Config) Renames() map[string]map[string]string {
	out := map[string]map[string]string{}
	if c.Local.Enabled && len(c.Local.Rename) > 0 {
		out[LocalID] = c.Local.Rename
	}
	for _, p := range c.Providers {
		if p.Enabled && len(p.Rename) > 0 {
			out[p.ID] = p.Rename
		}
	}
	return out
}

// namingKey decodes `naming:`.
func (d *Decoder) namingKey(v *yaml.Node, p string, c *Config) {
	s, ok := d.str(v, p, false)
	if !ok {
		return
	}
	if _, err := naming.ParseScheme(s); err != nil || s == "" {
		d.errAt(v, p, "unknown naming scheme %q (want %s)", clip(s), orList(NamingSchemes))
		return
	}
	c.Naming = s
}

// flatKey decodes `flat:`.
func (d *Decoder) flatKey(v *yaml.Node, p string, c *Config) {
	d.mapping(v, p, Keys(Flat{}), func(_ string, _, v *yaml.Node, kp string) {
		n, before := 0, len(d.errs)
		d.integer(v, kp, &n)
		if len(d.errs) > before || isNull(v) {
			return // integer reported it, or absent
		}
		if n < 1 || n > MaxFlatNameLength {
			d.errAt(v, kp, "maxNameLength %d is out of range (1 to %d; most clients accept at most 64)", n, MaxFlatNameLength)
			return
		}
		c.Flat.MaxNameLength = n
	})
}

// LocalID is the id of the repository-scripts provider (local:).
const LocalID = "local"

// renameKey decodes a `rename: {original: new}` of a provider or of
// local:. A new name must be non-empty, differ from the original and be
// given to one tool only.
func (d *Decoder) renameKey(v *yaml.Node, kp string) map[string]string {
	m := d.stringMap(v, kp)
	if m == nil {
		return nil
	}
	targets := map[string]string{}
	for _, orig := range sortedKeys(m) {
		nw := m[orig]
		ip := joinKey(kp, orig)
		switch {
		case strings.TrimSpace(nw) == "":
			d.errAt(v, ip, "rename of %q: the new name is empty", clip(orig))
			continue
		case nw == orig:
			d.errAt(v, ip, "rename of %q: the new name is the same", clip(orig))
			continue
		}
		if prev, dup := targets[nw]; dup {
			d.errAt(v, ip, "rename: %q and %q would both be named %q", clip(prev), clip(orig), clip(nw))
			continue
		}
		targets[nw] = orig
	}
	return m
}
