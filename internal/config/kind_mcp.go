package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/redact"
)

// MCP is the spec of kind mcp: an upstream MCP server over stdio (Command)
// or Streamable HTTP (URL).
type MCP struct {
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
	// Auth is the upstream's authorization (kind_mcp_auth.go); nil: none.
	Auth *MCPAuth `json:"auth,omitempty" yaml:"auth,omitempty"`
}

// Kind implements Spec.
func (*MCP) Kind() string { return "mcp" }

// Passthrough reports whether the upstream is exposed under its own names.
func (m *MCP) Passthrough() bool { return m.Prefix != nil && *m.Prefix == "" }

var mcpKind = kindDef{
	name:    "mcp",
	keys:    []string{"command", "args", "cwd", "env", "url", "headers", "trustAnnotations", "prefix", "auth"},
	newSpec: func() Spec { return &MCP{} },
	decode: func(d *decoder, s Spec, key string, v *yaml.Node, kp string) {
		m := s.(*MCP)
		switch key {
		case "command":
			d.setStr(&m.Command, v, kp)
		case "args":
			m.Args = d.stringList(v, kp)
		case "cwd":
			d.setStr(&m.Cwd, v, kp)
		case "env":
			m.Env = d.stringMap(v, kp)
		case "url":
			d.setStr(&m.URL, v, kp)
		case "headers":
			m.Headers = d.stringMap(v, kp)
		case "trustAnnotations":
			d.boolean(v, kp, &m.TrustAnnotations)
		case "auth":
			m.Auth = decodeMCPAuth(d, v, kp)
		case "prefix":
			if str, ok := d.str(v, kp, false); ok {
				m.Prefix = &str
			}
		}
	},
	validate: func(v *validator, p *Provider, pp string) {
		m := p.Spec.(*MCP)
		v.validateEnv(pp, m.Env)
		v.validateHeaders(pp, m.Headers)
		v.mcpAuth(pp+".auth", m)
		if pfx := pp + ".prefix"; m.Prefix != nil && *m.Prefix != "" && *m.Prefix != p.ID && !v.bad(pfx) {
			v.errf(pfx, `prefix %s: the id is the prefix; use "" to expose the tools under their own names, or rename the provider`, v.show(pfx, *m.Prefix))
		}
		hasCmd, hasURL := v.present(pp, "command", m.Command != ""), v.present(pp, "url", m.URL != "")
		switch {
		case !hasCmd && !hasURL:
			v.errf(pp, `kind mcp needs "command" (a stdio server) or "url" (a Streamable HTTP server)`)
		case m.Command != "" && m.URL != "":
			v.keyf(pp+".url", `set either "command" or "url", not both`)
		case hasURL:
			v.url(pp+".url", m.URL)
			for f, set := range map[string]bool{"args": len(m.Args) > 0, "cwd": m.Cwd != "", "env": len(m.Env) > 0} {
				if set {
					v.keyf(pp+"."+f, `%q applies only to stdio servers (with "command")`, f)
				}
			}
		default:
			if len(m.Headers) > 0 {
				v.keyf(pp+".headers", `"headers" applies only to HTTP servers (with "url")`)
			}
		}
	},
	resolve: func(s Spec, c *Config) {
		m := s.(*MCP)
		m.Cwd = c.Resolve(m.Cwd)
		if m.Auth != nil && m.Auth.PrivateKeyFile != "" {
			m.Auth.PrivateKeyFile = c.Resolve(m.Auth.PrivateKeyFile)
		}
	},
	redact: func(s Spec) Spec {
		m := *s.(*MCP)
		m.Env, m.Headers = redactMap(m.Env), redactMap(m.Headers)
		m.URL = redact.MaskURL(m.URL)
		m.Auth = redactMCPAuth(m.Auth)
		return &m
	},
	defaultCwd: func(s Spec, dir string) {
		if m := s.(*MCP); m.Cwd == "" && m.Command != "" {
			m.Cwd = dir
		}
	},
}
