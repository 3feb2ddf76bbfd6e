package config

import "go.yaml.in/yaml/v3"

// OpenAPI is the spec of kind openapi: a REST service described by an
// OpenAPI 3 document.
type OpenAPI struct {
	// Spec is the document: a path (resolved against the config's directory)
	// or an http(s) URL.
	Spec string `json:"spec,omitempty" yaml:"spec,omitempty"`
	// BaseURL overrides the document's servers[0]; every request stays under it.
	BaseURL string            `json:"baseURL,omitempty" yaml:"baseURL,omitempty"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
}

// Kind implements Spec.
func (*OpenAPI) Kind() string { return "openapi" }

var openapiKind = kindDef{
	name:    "openapi",
	keys:    []string{"spec", "baseURL", "headers"},
	newSpec: func() Spec { return &OpenAPI{} },
	decode: func(d *decoder, s Spec, key string, v *yaml.Node, kp string) {
		o := s.(*OpenAPI)
		switch key {
		case "spec":
			d.setStr(&o.Spec, v, kp)
		case "baseURL":
			d.setStr(&o.BaseURL, v, kp)
		case "headers":
			o.Headers = d.stringMap(v, kp)
		}
	},
	validate: func(v *validator, p *Provider, pp string) {
		o := p.Spec.(*OpenAPI)
		v.validateHeaders(pp, o.Headers)
		if !v.present(pp, "spec", o.Spec != "") {
			v.errf(pp, `kind openapi needs "spec" (the OpenAPI document's path or URL)`)
		}
		if o.BaseURL != "" {
			v.url(pp+".baseURL", o.BaseURL)
		}
	},
	resolve: func(s Spec, c *Config) {
		o := s.(*OpenAPI)
		o.Spec = c.Resolve(o.Spec)
	},
	redact: func(s Spec) Spec {
		o := *s.(*OpenAPI)
		o.Headers = redactMap(o.Headers)
		return &o
	},
}
