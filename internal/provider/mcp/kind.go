package mcp

import (
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/redact"
)

// Name is the kind's name, as written after kind:.
const Name = "mcp"

// Spec is the spec of kind mcp: an upstream MCP server over stdio (Command)
// or Streamable HTTP (URL). Its yaml tags are the kind's keys.
type Spec struct {
	Command          string            `json:"command,omitempty" yaml:"command,omitempty"`
	Args             []string          `json:"args,omitempty" yaml:"args,omitempty"`
	Cwd              string            `json:"cwd,omitempty" yaml:"cwd,omitempty"`
	Env              map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	URL              string            `json:"url,omitempty" yaml:"url,omitempty"`
	Headers          map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	TrustAnnotations bool              `json:"trustAnnotations" yaml:"trustAnnotations"`
	// Prefix is how the provider's tools are named in flat mode: nil
	// (absent) or the id itself gives "<id>_<tool>"; "" exposes the
	// upstream's tools under their own bare names, as a transparent
	// passthrough (a bare name that another provider already took is
	// skipped and reported by doctor). The id stays the provider's identity.
	Prefix *string `json:"prefix,omitempty" yaml:"prefix,omitempty"`
	// Auth is the upstream's authorization (kind_auth.go); nil: none.
	Auth *Auth `json:"auth,omitempty" yaml:"auth,omitempty"`
}

// Kind implements config.Spec.
func (*Spec) Kind() string { return Name }

// Passthrough reports whether the upstream is exposed under its own names.
func (m *Spec) Passthrough() bool { return m.Prefix != nil && *m.Prefix == "" }

// Kind is the kind mcp, for the list of kinds.
var Kind = provider.Kind{
	Kind: config.Kind{
		Name:       Name,
		NewSpec:    func() config.Spec { return &Spec{} },
		Validate:   validateSpec,
		Resolve:    resolve,
		Redact:     redactSpec,
		DefaultCwd: defaultCwd,
	},
	Build: Build,
}

func validateSpec(v *config.Validator, p *config.Provider, pp string) {
	m := p.Spec.(*Spec)
	v.Env(pp, m.Env)
	v.Headers(pp, m.Headers)
	validateAuth(v, pp+".auth", m)
	if pfx := pp + ".prefix"; m.Prefix != nil && *m.Prefix != "" && *m.Prefix != p.ID && !v.Bad(pfx) {
		v.Errf(pfx, `prefix %s: the id is the prefix; use "" to expose the tools under their own names, or rename the provider`, v.Show(pfx, *m.Prefix))
	}
	hasCmd, hasURL := v.Present(pp, "command", m.Command != ""), v.Present(pp, "url", m.URL != "")
	switch {
	case !hasCmd && !hasURL:
		v.Errf(pp, `kind mcp needs "command" (a stdio server) or "url" (a Streamable HTTP server)`)
	case m.Command != "" && m.URL != "":
		v.Keyf(pp+".url", `set either "command" or "url", not both`)
	case hasURL:
		v.URL(pp+".url", m.URL)
		for f, set := range map[string]bool{"args": len(m.Args) > 0, "cwd": m.Cwd != "", "env": len(m.Env) > 0} {
			if set {
				v.Keyf(pp+"."+f, `%q applies only to stdio servers (with "command")`, f)
			}
		}
	default:
		if len(m.Headers) > 0 {
			v.Keyf(pp+".headers", `"headers" applies only to HTTP servers (with "url")`)
		}
	}
}

func resolve(s config.Spec, c *config.Config) {
	m := s.(*Spec)
	m.Cwd = c.Resolve(m.Cwd)
	if m.Auth != nil && m.Auth.PrivateKeyFile != "" {
		m.Auth.PrivateKeyFile = c.Resolve(m.Auth.PrivateKeyFile)
	}
}

func redactSpec(s config.Spec) config.Spec {
	m := *s.(*Spec)
	m.Env, m.Headers = config.RedactMap(m.Env), config.RedactMap(m.Headers)
	m.URL = redact.MaskURL(m.URL)
	m.Auth = redactAuth(m.Auth)
	return &m
}

func defaultCwd(s config.Spec, dir string) {
	if m := s.(*Spec); m.Cwd == "" && m.Command != "" {
		m.Cwd = dir
	}
}
