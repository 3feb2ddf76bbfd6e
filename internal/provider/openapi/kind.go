package openapi

import (
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/text"
)

// Name is the kind's name, as written after kind:.
const Name = "openapi"

// Spec is the spec of kind openapi: a REST service described by an
// OpenAPI 3 document. The common key readonly holds globs over operationIds
// and tags for this kind.
type Spec struct {
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
	Auth *Auth `json:"auth,omitempty" yaml:"auth,omitempty"`
}

// Auth is one of four ways to authenticate; exactly one field is set.
type Auth struct {
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
	Token string `json:"token" yaml:"token" default:"/token"`
	// Header is the header the token goes in (default "Authorization").
	Header string `json:"header" yaml:"header" default:"Authorization"`
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

// Kind implements config.Spec.
func (*Spec) Kind() string { return Name }

// authKeys are the ways to authenticate, in the order messages list them.
var authKeys = config.Keys(Auth{})

func clip(s string) string { return text.Clip(s, 40) }

// DecodeField decodes auth, whose problems mark the whole block bad only
// when no way to authenticate was given.
func (o *Spec) DecodeField(d *config.Decoder, key string, n *yaml.Node, kp string) bool {
	if key != "auth" {
		return false
	}
	errs := d.ErrCount()
	a := &Auth{}
	if d.Decode(n, kp, a) {
		o.Auth = a
	} else {
		o.Auth = nil
	}
	// An error that left no auth key (an unknown key) is reported
	// already: no "needs one of" on top. An error inside a key (a list
	// for login.body) marks only that key bad, so that the rest of the
	// block is still checked and every error is reported at once.
	if d.ErrCount() > errs && !slices.ContainsFunc(authKeys, func(k string) bool { return d.Given(config.KeyPath(kp, k)) }) {
		d.MarkBad(kp)
	}
	return true
}

// Kind is the kind openapi, for the list of kinds.
var Kind = provider.Kind{
	Kind: config.Kind{
		Name:     Name,
		NewSpec:  func() config.Spec { return &Spec{} },
		Validate: validateSpec,
		Resolve: func(s config.Spec, c *config.Config) {
			o := s.(*Spec)
			o.Spec = c.Resolve(o.Spec)
		},
		Redact: redactSpec,
	},
	Build: Build,
}

func validateSpec(v *config.Validator, p *config.Provider, pp string) {
	o := p.Spec.(*Spec)
	v.Headers(pp, o.Headers)
	if !v.Present(pp, "spec", o.Spec != "") {
		v.Errf(pp, `kind openapi needs "spec" (the OpenAPI document's path or URL)`)
	} else if strings.Contains(o.Spec, "://") {
		v.URL(pp+".spec", o.Spec)
	}
	if o.BaseURL != "" {
		v.URL(pp+".baseURL", o.BaseURL)
	}
	opGlobs(v, pp+".include", o.Include)
	opGlobs(v, pp+".exclude", o.Exclude)
	opGlobs(v, pp+".readonly", p.ReadOnly)
	if o.Auth != nil {
		validateAuth(v, pp+".auth", o.Auth)
	}
}

func redactSpec(s config.Spec) config.Spec {
	o := *s.(*Spec)
	o.Headers = config.RedactMap(o.Headers)
	o.Spec, o.BaseURL = redact.MaskURL(o.Spec), redact.MaskURL(o.BaseURL)
	if a := o.Auth; a != nil {
		r := &Auth{Header: config.RedactMap(a.Header)}
		if a.Bearer != "" {
			r.Bearer = "***"
		}
		if a.Basic != nil {
			r.Basic = &BasicAuth{User: "***", Password: "***"}
		}
		if a.Login != nil {
			l := *a.Login
			l.Body = config.RedactMap(l.Body)
			r.Login = &l
		}
		o.Auth = r
	}
	return &o
}

// opGlobs checks globs over operationIds and tags (path.Match syntax; "*"
// does not cross "/", so "repos/*" selects GitHub's repos operations).
func opGlobs(v *config.Validator, p string, pats []string) {
	for i, pat := range pats {
		ip := config.ItemPath(p, i)
		if v.Bad(ip) {
			continue
		}
		if pat == "" {
			if !strings.HasSuffix(p, ".readonly") { // the common check reports an empty readonly entry
				v.Errf(ip, "empty pattern")
			}
		} else if _, err := path.Match(pat, ""); err != nil {
			v.Errf(ip, "pattern %s is not a valid glob (syntax: * ? [a-z] \\x)", v.Show(ip, pat))
		}
	}
}

func validateAuth(v *config.Validator, ap string, a *Auth) {
	if v.Bad(ap) {
		return
	}
	var set []string
	for _, k := range authKeys {
		if v.Present(ap, k, map[string]bool{"bearer": a.Bearer != "", "header": a.Header != nil, "basic": a.Basic != nil, "login": a.Login != nil}[k]) {
			set = append(set, k)
		}
	}
	switch {
	case len(set) == 0:
		v.Errf(ap, "auth needs one of %s", config.OrList(authKeys))
		return
	case len(set) > 1:
		v.Keyf(ap+"."+set[1], "auth takes one of %s, not both %q and %q", config.OrList(authKeys), set[0], set[1])
		return
	}
	for k := range a.Header {
		if !config.ValidHeaderName(k) {
			v.Keyf(config.KeyPath(ap+".header", k), "invalid header name %q", clip(k))
		}
	}
	if a.Header != nil && len(a.Header) == 0 && !v.Bad(ap+".header") {
		v.Errf(ap+".header", "auth.header needs at least one header: value")
	}
	if b := a.Basic; b != nil && !v.Present(ap+".basic", "user", b.User != "") {
		v.Errf(ap+".basic", `auth.basic needs "user" (and "password")`)
	}
	if l := a.Login; l != nil {
		lp := ap + ".login"
		switch {
		case !v.Present(lp, "path", l.Path != ""):
			v.Errf(lp, `auth.login needs "path" (the login operation's path under baseURL, e.g. /api/collections/users/auth-with-password)`)
		case v.Bad(lp + ".path"):
		case !strings.HasPrefix(l.Path, "/") || strings.Contains(l.Path, "://") || strings.Contains(l.Path, ".."):
			v.Errf(lp+".path", "login path %s must be a path under baseURL starting with /", v.Show(lp+".path", l.Path))
		}
		if tp := lp + ".token"; !v.Bad(tp) && !strings.HasPrefix(l.Token, "/") {
			v.Errf(tp, "token %s must be a JSON pointer into the login answer, such as /token", v.Show(tp, l.Token))
		}
		if hp := lp + ".header"; !v.Bad(hp) && !config.ValidHeaderName(l.Header) {
			v.Errf(hp, "invalid header name %s", v.Show(hp, l.Header))
		}
	}
}

var _ config.FieldDecoder = (*Spec)(nil)
