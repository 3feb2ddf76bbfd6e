package config

import (
	"github.com/agent-tools/agent-tools/internal/redact"

	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// OpenAPI is the spec of kind openapi: a REST service described by an
// OpenAPI 3 document. The common key readonly holds globs over operationIds
// and tags for this kind.
type OpenAPI struct {
	// Spec is the document: a path (resolved against the config's directory)
	// or an http(s) URL.
	Spec string `json:"spec,omitempty" yaml:"spec,omitempty"`
	// BaseURL overrides the document's servers[0]; every request stays under it.
	BaseURL string            `json:"baseURL,omitempty" yaml:"baseURL,omitempty"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	// Include and Exclude are globs (path.Match) over operationIds (tool
	// names) and tags: with Include set only matching operations become
	// tools; Exclude removes operations after that.
	Include []string `json:"include,omitempty" yaml:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty" yaml:"exclude,omitempty"`
	// Auth is the host-side credential attached to every request (nil: none).
	Auth *OpenAPIAuth `json:"auth,omitempty" yaml:"auth,omitempty"`
}

// OpenAPIAuth is one of four ways to authenticate; exactly one field is set.
type OpenAPIAuth struct {
	// Bearer is sent as "Authorization: Bearer <value>".
	Bearer string `json:"bearer,omitempty" yaml:"bearer,omitempty"`
	// Header holds header names and their values, sent as is.
	Header map[string]string `json:"header,omitempty" yaml:"header,omitempty"`
	Basic  *BasicAuth        `json:"basic,omitempty" yaml:"basic,omitempty"`
	Login  *LoginAuth        `json:"login,omitempty" yaml:"login,omitempty"`
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	User     string `json:"user" yaml:"user"`
	Password string `json:"password" yaml:"password"`
}

// LoginAuth is a login flow: POST Body as JSON to Path (under baseURL), read
// the token at the JSON pointer Token of the answer, and send it as
// "<Header>: <Prefix><token>" until it expires or a request gets 401.
type LoginAuth struct {
	Path string            `json:"path" yaml:"path"`
	Body map[string]string `json:"body,omitempty" yaml:"body,omitempty"`
	// Token is a JSON pointer into the login answer (default "/token").
	Token string `json:"token" yaml:"token"`
	// Header is the header the token goes in (default "Authorization").
	Header string `json:"header" yaml:"header"`
	// Prefix goes before the token (nil: "Bearer "; "" sends the bare token).
	Prefix *string `json:"prefix,omitempty" yaml:"prefix,omitempty"`
}

// TokenPrefix is the prefix the token is sent with.
func (l *LoginAuth) TokenPrefix() string {
	if l.Prefix == nil {
		return "Bearer "
	}
	return *l.Prefix
}

// Kind implements Spec.
func (*OpenAPI) Kind() string { return "openapi" }

var (
	openapiAuthKeys  = []string{"bearer", "header", "basic", "login"}
	openapiBasicKeys = []string{"user", "password"}
	openapiLoginKeys = []string{"path", "body", "token", "header", "prefix"}
)

func decodeOpenAPIAuth(d *decoder, v *yaml.Node, kp string) *OpenAPIAuth {
	a := &OpenAPIAuth{}
	errs := len(d.errs)
	defer func() {
		// An error that left no auth key (an unknown key) is reported
		// already: no "needs one of" on top. An error inside a key (a list
		// for login.body) marks only that key bad, so that the rest of the
		// block is still checked and every error is reported at once.
		if len(d.errs) > errs && !slices.ContainsFunc(openapiAuthKeys, func(k string) bool { _, ok := d.meta.key[joinKey(kp, k)]; return ok }) {
			d.meta.bad[kp] = true
		}
	}()
	if !d.mapping(v, kp, openapiAuthKeys, func(key string, _, v *yaml.Node, kp string) {
		switch key {
		case "bearer":
			d.setStr(&a.Bearer, v, kp)
		case "header":
			a.Header = d.stringMap(v, kp)
		case "basic":
			b := &BasicAuth{}
			if d.mapping(v, kp, openapiBasicKeys, func(key string, _, v *yaml.Node, kp string) {
				switch key {
				case "user":
					d.setStr(&b.User, v, kp)
				case "password":
					d.setStr(&b.Password, v, kp)
				}
			}) {
				a.Basic = b
			}
		case "login":
			l := &LoginAuth{Token: "/token", Header: "Authorization"}
			if d.mapping(v, kp, openapiLoginKeys, func(key string, _, v *yaml.Node, kp string) {
				switch key {
				case "path":
					d.setStr(&l.Path, v, kp)
				case "body":
					l.Body = d.stringMap(v, kp)
				case "token":
					d.setStr(&l.Token, v, kp)
				case "header":
					d.setStr(&l.Header, v, kp)
				case "prefix":
					if s, ok := d.str(v, kp, false); ok {
						l.Prefix = &s
					}
				}
			}) {
				a.Login = l
			}
		}
	}) {
		return nil
	}
	return a
}

var openapiKind = kindDef{
	name:    "openapi",
	keys:    []string{"spec", "baseURL", "headers", "include", "exclude", "auth"},
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
		case "include":
			o.Include = d.stringList(v, kp)
		case "exclude":
			o.Exclude = d.stringList(v, kp)
		case "auth":
			o.Auth = decodeOpenAPIAuth(d, v, kp)
		}
	},
	validate: func(v *validator, p *Provider, pp string) {
		o := p.Spec.(*OpenAPI)
		v.validateHeaders(pp, o.Headers)
		if !v.present(pp, "spec", o.Spec != "") {
			v.errf(pp, `kind openapi needs "spec" (the OpenAPI document's path or URL)`)
		} else if strings.Contains(o.Spec, "://") {
			v.url(pp+".spec", o.Spec)
		}
		if o.BaseURL != "" {
			v.url(pp+".baseURL", o.BaseURL)
		}
		v.opGlobs(pp+".include", o.Include)
		v.opGlobs(pp+".exclude", o.Exclude)
		v.opGlobs(pp+".readonly", p.ReadOnly)
		if o.Auth != nil {
			v.openapiAuth(pp+".auth", o.Auth)
		}
	},
	resolve: func(s Spec, c *Config) {
		o := s.(*OpenAPI)
		o.Spec = c.Resolve(o.Spec)
	},
	redact: func(s Spec) Spec {
		o := *s.(*OpenAPI)
		o.Headers = redactMap(o.Headers)
		o.Spec, o.BaseURL = redact.MaskURL(o.Spec), redact.MaskURL(o.BaseURL)
		if a := o.Auth; a != nil {
			r := &OpenAPIAuth{Header: redactMap(a.Header)}
			if a.Bearer != "" {
				r.Bearer = "***"
			}
			if a.Basic != nil {
				r.Basic = &BasicAuth{User: "***", Password: "***"}
			}
			if a.Login != nil {
				l := *a.Login
				l.Body = redactMap(l.Body)
				r.Login = &l
			}
			o.Auth = r
		}
		return &o
	},
}

// opGlobs checks globs over operationIds and tags (path.Match syntax; "*"
// does not cross "/", so "repos/*" selects GitHub's repos operations).
func (v *validator) opGlobs(p string, pats []string) {
	for i, pat := range pats {
		ip := index(p, i)
		if v.bad(ip) {
			continue
		}
		if pat == "" {
			if !strings.HasSuffix(p, ".readonly") { // the common check reports an empty readonly entry
				v.errf(ip, "empty pattern")
			}
		} else if _, err := path.Match(pat, ""); err != nil {
			v.errf(ip, "pattern %s is not a valid glob (syntax: * ? [a-z] \\x)", v.show(ip, pat))
		}
	}
}

func (v *validator) openapiAuth(ap string, a *OpenAPIAuth) {
	if v.bad(ap) {
		return
	}
	var set []string
	for _, k := range openapiAuthKeys {
		if v.present(ap, k, map[string]bool{"bearer": a.Bearer != "", "header": a.Header != nil, "basic": a.Basic != nil, "login": a.Login != nil}[k]) {
			set = append(set, k)
		}
	}
	switch {
	case len(set) == 0:
		v.errf(ap, "auth needs one of %s", orList(openapiAuthKeys))
		return
	case len(set) > 1:
		v.keyf(ap+"."+set[1], "auth takes one of %s, not both %q and %q", orList(openapiAuthKeys), set[0], set[1])
		return
	}
	for k := range a.Header {
		if !validHeaderName(k) {
			v.keyf(joinKey(ap+".header", k), "invalid header name %q", clip(k))
		}
	}
	if a.Header != nil && len(a.Header) == 0 && !v.bad(ap+".header") {
		v.errf(ap+".header", "auth.header needs at least one header: value")
	}
	if b := a.Basic; b != nil && !v.present(ap+".basic", "user", b.User != "") {
		v.errf(ap+".basic", `auth.basic needs "user" (and "password")`)
	}
	if l := a.Login; l != nil {
		lp := ap + ".login"
		switch {
		case !v.present(lp, "path", l.Path != ""):
			v.errf(lp, `auth.login needs "path" (the login operation's path under baseURL, e.g. /api/collections/users/auth-with-password)`)
		case v.bad(lp + ".path"):
		case !strings.HasPrefix(l.Path, "/") || strings.Contains(l.Path, "://") || strings.Contains(l.Path, ".."):
			v.errf(lp+".path", "login path %s must be a path under baseURL starting with /", v.show(lp+".path", l.Path))
		}
		if tp := lp + ".token"; !v.bad(tp) && !strings.HasPrefix(l.Token, "/") {
			v.errf(tp, "token %s must be a JSON pointer into the login answer, such as /token", v.show(tp, l.Token))
		}
		if hp := lp + ".header"; !v.bad(hp) && !validHeaderName(l.Header) {
			v.errf(hp, "invalid header name %s", v.show(hp, l.Header))
		}
	}
}
