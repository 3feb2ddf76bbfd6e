package config

import (
	"regexp"
	"slices"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Profile is a view of the runtime: a subset of providers and tools served
// in a mode of its own at /mcp/p/<slug> (HTTP) or by serve --profile <slug>
// (stdio). Empty Providers means every provider; Mode "" means the top-level
// mode.
type Profile struct {
	Providers []string    `json:"providers,omitempty" yaml:"providers,omitempty"`
	Tools     ToolsFilter `json:"tools,omitzero" yaml:"tools,omitempty"`
	Mode      string      `json:"mode,omitempty" yaml:"mode,omitempty"`
}

// ToolsFilter is allow/deny globs over canonical names (deny wins; a
// non-empty allow is exhaustive), as policy.allow/deny.
type ToolsFilter struct {
	Allow []string `json:"allow,omitempty" yaml:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty" yaml:"deny,omitempty"`
}

// Rule is one per-identity rule of policy.rules: for callers whose identity
// matches one of Identities (globs over the identity the runtime computes:
// "token:<name>" or "token:<8 hex>", "oidc:<issuer>|<subject>",
// "process:<pid>"; empty = any), whose verified token carries the Claims
// (empty = no condition), and who come through one of Profiles (empty = any, "default" = /mcp), it
// adds Allow/Deny globs over canonical names and may override Confirm.
type Rule struct {
	Identities []string `json:"identities,omitempty" yaml:"identities,omitempty"`
	// Claims match verified OIDC token claims: for every claim named, the
	// token's value equals one listed, or (an array) contains one. A
	// boolean or number claim is compared as its JSON text ("true", "3").
	Claims   map[string][]string `json:"claims,omitempty" yaml:"claims,omitempty"`
	Profiles []string            `json:"profiles,omitempty" yaml:"profiles,omitempty"`
	Allow    []string            `json:"allow,omitempty" yaml:"allow,omitempty"`
	Deny     []string            `json:"deny,omitempty" yaml:"deny,omitempty"`
	Confirm  string              `json:"confirm,omitempty" yaml:"confirm,omitempty"`
}

// DefaultProfile names the unprofiled /mcp endpoint in rules and metrics.
const DefaultProfile = "default"

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ProfileNames lists the configured profile slugs, sorted.
func (c *Config) ProfileNames() []string {
	out := make([]string, 0, len(c.Profiles))
	for s := range c.Profiles {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// profiles decodes the top-level profiles: mapping.
func (d *Decoder) profiles(v *yaml.Node, path string, c *Config) {
	c.Profiles = map[string]Profile{}
	d.mapping(v, path, nil, func(slug string, k, v *yaml.Node, p string) {
		if !slugRE.MatchString(slug) || slug == DefaultProfile {
			d.report(k, path, "profile name %q: want lower-case letters, digits, - and _ (and not %q)", clip(slug), DefaultProfile)
			return
		}
		var pr Profile
		d.Decode(v, p, &pr)
		c.Profiles[slug] = pr
	})
}

// rules decodes policy.rules.
func (d *Decoder) rules(v *yaml.Node, path string, pol *Policy) {
	pol.Rules = nil
	d.sequence(v, path, func(_ int, item *yaml.Node, ip string) {
		var r Rule
		d.Decode(item, ip, &r)
		pol.Rules = append(pol.Rules, r)
	})
}

func (pol *Policy) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "rules" {
		return false
	}
	d.rules(v, p, pol)
	return true
}

// decodeField decodes claims, each of which needs at least one value.
func (r *Rule) decodeField(d *Decoder, key string, v *yaml.Node, kp string) bool {
	if key != "claims" {
		return false
	}
	r.Claims = map[string][]string{}
	d.mapping(v, kp, nil, func(name string, _, v *yaml.Node, cp string) {
		if vals := d.stringList(v, cp); len(vals) > 0 {
			r.Claims[name] = vals
		} else if !d.meta.bad[cp] {
			d.errAt(v, cp, "want a non-empty list of values (a token matches when its %q claim equals, or contains, one of them)", clip(name))
		}
	})
	return true
}

// globs reports every malformed pattern of a list.
func (v *Validator) globs(p string, pats []string) {
	for i, pat := range pats {
		ip := index(p, i)
		if v.bad(ip) {
			continue
		}
		if msg := checkGlob(pat, v.c.Naming == "lossless"); msg != "" {
			v.errf(ip, "pattern %s %s", v.show(ip, pat), msg)
		}
	}
}

// profilesAndRules checks profile modes, provider references and globs, and
// that every rule names known profiles, valid globs and a known confirm mode.
func (v *Validator) profilesAndRules() {
	ids := map[string]string{"local": "", "builtin": ""} // the runtime's own providers can be named too
	for _, p := range v.c.Providers {
		ids[p.ID] = ""
	}
	for _, slug := range v.c.ProfileNames() {
		pr := v.c.Profiles[slug]
		p := joinKey("profiles", slug)
		if mp := joinKey(p, "mode"); pr.Mode != "" && !slices.Contains(Modes, pr.Mode) && !v.bad(mp) {
			v.errf(mp, "unknown mode %s (want %s)", v.show(mp, pr.Mode), orList(Modes))
		}
		for i, id := range pr.Providers {
			if ip := index(joinKey(p, "providers"), i); !has(ids, id) && !v.bad(ip) {
				v.errf(ip, "unknown provider %s (configured: %s)", v.show(ip, id), orList(sortedKeys(ids)))
			}
		}
		v.globs(joinKey(joinKey(p, "tools"), "allow"), pr.Tools.Allow)
		v.globs(joinKey(joinKey(p, "tools"), "deny"), pr.Tools.Deny)
	}
	for j, id := range v.c.Policy.Operators {
		if ip := index("policy.operators", j); !v.bad(ip) {
			if msg := checkGlob(id, false); msg != "" {
				v.errf(ip, "identity pattern %s %s", v.show(ip, id), msg)
			}
		}
	}
	known := append([]string{DefaultProfile}, v.c.ProfileNames()...)
	for i, r := range v.c.Policy.Rules {
		rp := index("policy.rules", i)
		if v.bad(rp) {
			continue
		}
		for j, slug := range r.Profiles {
			if sp := index(joinKey(rp, "profiles"), j); !slices.Contains(known, slug) && !v.bad(sp) {
				v.errf(sp, "unknown profile %s (want %s)", v.show(sp, slug), orList(known))
			}
		}
		for j, id := range r.Identities {
			if ip := index(joinKey(rp, "identities"), j); !v.bad(ip) {
				if msg := checkGlob(id, false); msg != "" {
					v.errf(ip, "identity pattern %s %s", v.show(ip, id), msg)
				}
			}
		}
		v.globs(joinKey(rp, "allow"), r.Allow)
		v.globs(joinKey(rp, "deny"), r.Deny)
		if cp := joinKey(rp, "confirm"); r.Confirm != "" && !slices.Contains(ConfirmModes, r.Confirm) && !v.bad(cp) {
			v.errf(cp, "unknown confirm policy %s (want %s)", v.show(cp, r.Confirm), orList(ConfirmModes))
		}
	}
}

func has(m map[string]string, k string) bool { _, ok := m[k]; return ok }
