package config

import (
	"encoding/json"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// Override is one entry of a provider's `overrides: {<tool>: …}`: what
// the model reads of the tool, and argument defaults and hidden arguments
// (a hidden argument needs a default: it is filled from it).
//
//	overrides:
//	  search_issues:
//	    description: Search this team's issues.
//	    annotations: {readOnlyHint: true}
//	    defaults: {repo: acme/web}
//	    hide: [repo]
type Override struct {
	Description string         `json:"description,omitempty" yaml:"description,omitempty"`
	Title       string         `json:"title,omitempty" yaml:"title,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty" yaml:"annotations,omitempty"`
	Defaults    map[string]any `json:"defaults,omitempty" yaml:"defaults,omitempty"`
	Hide        []string       `json:"hide,omitempty" yaml:"hide,omitempty"`
	defaults    map[string]json.RawMessage
}

// Annotations are the MCP hints an override may set.
type Annotations struct {
	// ReadOnlyHint true: the tool never needs confirmation.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty" yaml:"readOnlyHint,omitempty"`
	// DestructiveHint true: the tool always needs confirmation.
	DestructiveHint *bool `json:"destructiveHint,omitempty" yaml:"destructiveHint,omitempty"`
}

// overridesKey decodes a provider's `overrides:`.
func (d *Decoder) overridesKey(v *yaml.Node, kp string, p *Provider) {
	out := map[string]Override{}
	d.mapping(v, kp, nil, func(tool string, _, v *yaml.Node, tp string) {
		var o Override
		d.Decode(v, tp, &o)
		for i, h := range o.Hide {
			if _, ok := o.defaults[h]; !ok && h != "" {
				d.errAt(v, index(joinKey(tp, "hide"), i), "hidden argument %q needs a value under defaults: (it is filled from there)", clip(h))
			}
		}
		out[tool] = o
	})
	if len(out) > 0 {
		p.Overrides = out
	}
}

// decodeField decodes annotations (present even when empty) and defaults
// (any JSON value, kept as written for the tool's arguments).
func (o *Override) decodeField(d *Decoder, key string, v *yaml.Node, fp string) bool {
	switch key {
	case "annotations":
		a := &Annotations{}
		d.Decode(v, fp, a)
		o.Annotations = a
	case "defaults":
		o.Defaults, o.defaults = map[string]any{}, map[string]json.RawMessage{}
		d.mapping(v, fp, nil, func(arg string, _, v *yaml.Node, ap string) {
			var val any
			if err := v.Decode(&val); err != nil {
				d.errAt(v, ap, "default of %q: %v", clip(arg), err)
				return
			}
			raw, err := json.Marshal(val)
			if err != nil {
				d.errAt(v, ap, "default of %q is not a JSON value: %v", clip(arg), err)
				return
			}
			o.Defaults[arg], o.defaults[arg] = val, raw
		})
	default:
		return false
	}
	return true
}

// Overrides gathers every enabled provider's overrides as the registry
// applies them: provider id → the tool's own name → its view.
func (c *Config) Overrides() map[string]map[string]catalog.Override {
	out := map[string]map[string]catalog.Override{}
	for _, p := range c.Providers {
		if !p.Enabled || len(p.Overrides) == 0 {
			continue
		}
		m := map[string]catalog.Override{}
		for tool, o := range p.Overrides {
			co := catalog.Override{Description: o.Description, Title: o.Title, Hide: slices.Clone(o.Hide), Defaults: o.defaults}
			if co.Defaults == nil && len(o.Defaults) > 0 { // built in code, not decoded
				co.Defaults = map[string]json.RawMessage{}
				for k, v := range o.Defaults {
					if raw, err := json.Marshal(v); err == nil {
						co.Defaults[k] = raw
					}
				}
			}
			if a := o.Annotations; a != nil {
				co.ReadOnly, co.AlwaysConfirm = a.ReadOnlyHint, a.DestructiveHint
			}
			m[tool] = co
		}
		out[p.ID] = m
	}
	return out
}
