package config

import (
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Registry is the registry: section: the MCP server registries that
// `agent-tools registry` searches and installs from (docs/registry.md).
type Registry struct {
	// URL lists registry base URLs in order (a private one first); one
	// URL may be written as a string. Empty: the official registry.
	URL []string `json:"url,omitempty" yaml:"url,omitempty"`
}

// ProviderPinModes are the values of a provider's own pin: key.
// "quarantine" holds every tool of the provider until a person approves
// it, from its first listing on, whatever security.pin says (providers
// added by `agent-tools registry add` start so).
var ProviderPinModes = []string{"quarantine"}

func (r *Registry) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "url" {
		return false
	}
	var urls []string
	if n := d.resolve(v, p); n != nil && n.Kind == yaml.ScalarNode && !isNull(n) {
		if s, ok := d.str(n, p, false); ok {
			urls = []string{s}
		}
	} else {
		urls = d.stringList(v, p)
	}
	for i, u := range urls {
		u = strings.TrimSpace(u)
		pu, err := url.Parse(u)
		if u == "" || err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			at := p
			if len(urls) > 1 || v.Kind == yaml.SequenceNode {
				at = index(p, i)
			}
			d.errAt(v, at, "a registry URL must be an http(s) URL such as https://registry.modelcontextprotocol.io")
			continue
		}
		r.URL = append(r.URL, strings.TrimRight(u, "/"))
	}
	return true
}

// pinKey decodes a provider's pin: key.
func (d *Decoder) pinKey(v *yaml.Node, p string, out *string) {
	s, ok := d.str(v, p, false)
	if !ok {
		return
	}
	if s != "" && !slices.Contains(ProviderPinModes, s) {
		d.errAt(v, p, "unknown pin mode %q for a provider (want %s; security.pin sets the default)", s, orList(ProviderPinModes))
		return
	}
	*out = s
}

var _ fieldDecoder = (*Registry)(nil)
